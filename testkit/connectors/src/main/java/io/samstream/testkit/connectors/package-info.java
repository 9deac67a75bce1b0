/**
 * Test support built on the connectors module, for the tests of the modules above it (stream, bench):
 * {@link io.samstream.testkit.connectors.KafkaBrokerExtension} runs connectors' embedded KRaft broker for a
 * test class or each test, {@link io.samstream.testkit.connectors.MaskTopics} reads a masks topic back as
 * records, {@link io.samstream.testkit.connectors.ObjectMasks} decodes a record's mask with the testkit's own
 * decoder, {@link io.samstream.testkit.connectors.TestClips} writes test-pattern clips with FFmpeg, and
 * {@link io.samstream.testkit.connectors.PatternTruth} says which pixels of a test-pattern frame are a shape's.
 *
 * <p>A layer of its own because it needs connectors: in the bottom testkit it would make connectors'
 * tests (which use the testkit) depend on connectors itself, a cycle. connectors' own tests use the broker
 * and the writer directly: there they are the classes under test.
 */
package io.samstream.testkit.connectors;
