/**
 * SAM 3's video path on the CPU in streaming form: {@link io.samstream.gpu.sam3.video.Sam3VideoModel} (the detector
 * and the tracker of one {@code sam3.pt}) and {@link io.samstream.gpu.sam3.video.Sam3VideoTracker} (one stream:
 * {@code step(frame, concepts)} gives each frame's objects with stable ids and the concept that found them).
 *
 * <p>One part per file, after Meta's {@code sam3/model/sam3_video_base.py}, {@code sam3_tracker_base.py} and {@code
 * sam3_tracking_predictor.py}: the tracker {@code Sam3TrackerModel} (SAM 2.1's parts from {@code io.samstream.gpu.sam2}
 * under a name mapping, plus {@code MaskPrompt}), {@code ObjectMemory} and {@code MemoryPicker} (bounded memory with
 * SAM 3's memory selection; its features are {@code FeatureMap}s, kept where the {@code TrackerPasses} keep them,
 * e.g. a GPU's device bank, and released by the memory that owns them), {@code Cohort}; detection {@code Sam3ConceptDetector} (behind {@code ConceptDetector});
 * the per-frame rules {@code Association}, {@code Hotstart}, {@code OcclusionSuppression}, {@code MaskOverlaps},
 * {@code HoleFilling}, {@code NewObjects}, {@code FrameOutputs}, {@code MemoryMasks}, {@code MaskResize}; one
 * concept's step {@code ConceptTracker}; settings {@code Sam3VideoSettings}.
 */
package io.samstream.gpu.sam3.video;
