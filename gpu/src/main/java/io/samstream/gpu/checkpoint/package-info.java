/**
 * Loading SAM checkpoints: {@link io.samstream.gpu.checkpoint.CheckpointLoader#load} reads a file into a
 * {@link io.samstream.gpu.checkpoint.StateDict} of fp32 tensors under Meta's segment-anything names.
 *
 * <p>Formats, told apart by content: PyTorch zip archives as written by {@code torch.save} (PyTorch 1.6
 * and later, pickle protocols 2-5) and safetensors. The legacy non-zip torch format and TorchScript
 * archives are refused with a hint on how to re-save. Element types: float32, float16 and bfloat16
 * (widened exactly) and float64 (rounded); integer tensors in the state_dict are an error naming them.
 *
 * <p>Safety: a torch pickle is interpreted by {@code RestrictedUnpickler}, which knows only the handful
 * of torch rebuild functions and storage types a state_dict uses and emulates them itself. Nothing named
 * in the file is ever imported or called; any other global or opcode is refused where it appears, before
 * any tensor data is read. Dict keys must be scalars (no hashing of attacker-built structures), and
 * nesting, memo and value counts are bounded. Before an array is allocated, the readers cost the file:
 * views must lie inside their storages without broadcasting or overlapping themselves, storages must
 * be records of exactly their declared size, decompressed records and the tensors' total are bounded
 * relative to the file's size, and safetensors entries may not share bytes. Zip records are checked
 * against their CRC-32, and files named like Meta's releases against the SHA-256 their name begins.
 *
 * <p>Naming: Hugging Face transformers' {@code SamModel} names are detected and mapped by
 * {@link io.samstream.gpu.checkpoint.HuggingFaceSamKeys}; a DataParallel "module." prefix is dropped; a
 * state_dict nested under "model" or "state_dict" in a training checkpoint is found. Whether the tensors
 * form a SAM model is checked by {@code io.samstream.gpu.model.SamConfigInference}.
 */
package io.samstream.gpu.checkpoint;
