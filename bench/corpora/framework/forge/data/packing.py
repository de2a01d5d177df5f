"""forge: sequence packing.

Module data/packing.py.
"""

def pack(sequences, seq_len, eos_id):
    buffer, packed = [], []
    for sequence in sequences:
        buffer.extend(sequence + [eos_id])
        while len(buffer) >= seq_len:
            packed.append(buffer[:seq_len])
            buffer = buffer[seq_len:]
    return packed
