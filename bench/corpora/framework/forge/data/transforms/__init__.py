from forge.data.transforms.random_crop import random_crop
from forge.data.transforms.resize import resize
from forge.data.transforms.normalize import normalize
from forge.data.transforms.flip import flip
from forge.data.transforms.color_jitter import color_jitter
from forge.data.transforms.mixup import mixup
from forge.data.transforms.cutmix import cutmix
from forge.data.transforms.randaugment import randaugment
from forge.data.transforms.tubelet import tubelet
from forge.data.transforms.frame_sample import frame_sample
from forge.data.transforms.spec_augment import spec_augment
from forge.data.transforms.mel import mel
from forge.data.transforms.text_clean import text_clean
from forge.data.transforms.dedup import dedup
from forge.data.transforms.mask_tokens import mask_tokens
from forge.data.transforms.truncate import truncate

BY_MODALITY = {
    "image": [random_crop, resize, normalize, flip, color_jitter, mixup, cutmix, randaugment],
    "video": [tubelet, frame_sample],
    "audio": [spec_augment, mel],
    "text": [text_clean, dedup, mask_tokens, truncate],
}
