package io.samstream.stream.http;

/**
 * One preview frame of a watched stream: the JPEG (downscaled, masks drawn) and the JSON text of its objects.
 *
 * @param stream  the stream's id
 * @param frame   the frame's index
 * @param width   the JPEG's width in pixels (the preview's, not the stream's)
 * @param jpeg    the image
 * @param objects the frame's objects as the WebSocket's text message carries them
 * @param madeAt  when it was made ({@link System#nanoTime})
 */
record Preview(String stream, long frame, int width, byte[] jpeg, String objects, long madeAt) {}
