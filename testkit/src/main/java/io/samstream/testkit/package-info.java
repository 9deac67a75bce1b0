/**
 * What the modules' tests share, so that no test reaches a fixture by a relative path or carries a copy
 * of another test's helper: where the repository's fixtures and bundled models are ({@link
 * io.samstream.testkit.Fixtures}, {@link io.samstream.testkit.TestModels}), an independent COCO RLE
 * decoder for assertions on masks ({@link io.samstream.testkit.CocoMasks}), a plain reader of Kafka
 * topics ({@link io.samstream.testkit.KafkaTopics}) and the fuzz targets' bounds ({@link
 * io.samstream.testkit.FuzzBounds}).
 *
 * <p><b>Why this module depends on no project module.</b> config, gpu, connectors and stream all take
 * the testkit as a test dependency; a testkit that needed one of them would be built after it, and that
 * module's tests could not use the testkit (Maven refuses the cycle). So it sits at the bottom, beside
 * the modules rather than above them, and knows none of their classes:
 * <ul>
 *   <li>its RLE decoder is its own, not gpu's {@code CocoRle}: an assertion that decodes with the
 *       encoder's own code would pass when both are wrong the same way, an independent decoder of
 *       pycocotools' format does not;</li>
 *   <li>its Kafka reader needs only {@code kafka-clients}, an optional dependency here: modules that
 *       talk to Kafka (connectors, stream, bench) have it anyway, and config and gpu do not get it.</li>
 * </ul>
 * What needs a project module lives one layer up, in {@code testkit/connectors}
 * ({@code io.samstream.testkit.connectors}): the JUnit extension that runs connectors' embedded Kafka
 * broker and the clips written by connectors' FFmpeg writer, for the tests of stream and bench. The
 * tests of connectors itself use the broker and the writer directly, as the classes under test.
 */
package io.samstream.testkit;
