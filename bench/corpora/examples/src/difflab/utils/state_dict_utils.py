"""Renaming LoRA state dicts between the layouts of the library, of PEFT and of older checkpoints."""

PEFT_TO_DIFFLAB = {
    ".lora_A.weight": ".lora.down.weight",
    ".lora_B.weight": ".lora.up.weight",
}
OLD_TO_DIFFLAB = {
    ".to_out_lora.": ".to_out.0.lora.",
    ".processor.": ".",
}


def _rename(state_dict, mapping):
    out = {}
    for key, value in state_dict.items():
        for old, new in mapping.items():
            key = key.replace(old, new)
        out[key] = value
    return out


def convert_state_dict_to_difflab(state_dict):
    return _rename(_rename(state_dict, OLD_TO_DIFFLAB), PEFT_TO_DIFFLAB)


def convert_state_dict_to_peft(state_dict):
    return _rename(state_dict, {new: old for old, new in PEFT_TO_DIFFLAB.items()})


def convert_unet_state_dict_to_peft(state_dict):
    return convert_state_dict_to_peft(convert_state_dict_to_difflab(state_dict))
