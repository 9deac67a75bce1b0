package io.samstream.stream.engine;

import io.samstream.config.ClusterSettings;
import io.samstream.config.Limits;
import io.samstream.config.StreamDefaults;
import io.samstream.config.StreamSpec;
import io.samstream.connectors.kafka.KafkaClients;
import io.samstream.stream.track.TrackingState;
import io.samstream.stream.track.kalman.TrackerState;
import io.samstream.stream.track.memory.MemoryTrackerState;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One engine of a fleet sharded by Kafka's consumer group ({@code samstream.cluster}). The streams topic
 * is consumed by the group (cooperative-sticky, static membership); this engine runs exactly the
 * streams whose keys lie in its assigned partitions. It reads the same partitions of the prompts topic
 * (offsets kept in the group {@code <group>.prompts}, so a moved partition's next owner goes on after
 * the last message handled), and keeps each stream's progress and tracks in the compacted state topic
 * (same key, same partition count): after every {@code state-every-frames} published frames, when a
 * partition is revoked, and after each accepted prompt change before its offset is committed. A stream
 * that arrives here with a state goes on after its last acknowledged frame, with its tracks and the
 * prompts in force (those of the prompts topic included); prompt messages the state holds already are
 * not applied again. Everything runs on one thread of its own (rebalance callbacks included).
 *
 * <p>Every record of the three topics is validated whole before anything acts on it ({@link DefinitionRecord},
 * {@link StateRecord}, {@link PromptMessage}, against {@code samstream.limits}); one that fails is skipped for its
 * stream alone ({@link ControlRejections}: logged once, counted, dead-lettered) and the member reads on: no record
 * can make it leave its group. Only Kafka itself failing (the group or a topic unreachable past its timeouts) ends
 * the member thread: then {@link #following()} turns false (the readiness probe's flag) and {@link #stopped()}
 * completes, which makes {@code samstream run} exit non-zero for its supervisor to restart it.
 */
public final class ClusterMember implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ClusterMember.class);
    private static final Duration POLL = Duration.ofMillis(100);
    private static final Duration STOP_WAIT = Duration.ofSeconds(30);
    private static final Duration KAFKA_WAIT = Duration.ofSeconds(30);

    private final Engine engine;
    private final KafkaClients clients;
    private final ClusterSettings cluster;
    private final String streamsTopic;
    private final String promptsTopic;
    private final StreamDefaults defaults;
    private final String instanceId;
    private final PromptsTopicWatcher prompts;
    private final KafkaConsumer<String, byte[]> streams;
    private final KafkaConsumer<String, byte[]> promptsConsumer;
    private final StateWriter state;
    /** Reads the state topic's partitions as they are assigned (the member thread's). */
    private final KafkaConsumer<String, byte[]> stateReader;
    private final Thread thread;
    private volatile boolean closed;
    /** Set by {@link #close(Duration)}: what the member thread's last steps may take. */
    private volatile ShutdownBudget closing;
    private final Limits limits;
    private final ControlRejections rejections;
    /** Set when the member thread ends; completes with its failure (null when closed). */
    private final CompletableFuture<Throwable> stopped = new CompletableFuture<>();
    /** Work handed to the member thread by other threads (a stream's end), run between polls. */
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();

    // The member thread's own.
    private final Set<Integer> owned = new TreeSet<>();
    /** Assigned streams partitions still being read up to this offset; their prompts wait until then. */
    private final Map<Integer, Long> loading = new HashMap<>();
    private final Set<Integer> promptsAssigned = new TreeSet<>();
    private final Map<String, Integer> partitionOf = new HashMap<>();
    private final Map<String, String> definitions = new HashMap<>();
    /** State records read for the streams of newly assigned partitions, taken when their definition comes. */
    private final Map<String, ConsumerRecord<String, byte[]>> states = new HashMap<>();

    private volatile Set<Integer> ownedView = Set.of();
    /** Assigned at least once since it last lost its partitions (a member of the group), and why it stopped. */
    private volatile boolean joined;
    private volatile String stoppedBy;
    private final AtomicLong resumed = new AtomicLong();
    private final AtomicLong tracksTakenUp = new AtomicLong();

    private ClusterMember(Engine engine, KafkaClients clients, ClusterSettings cluster, String streamsTopic,
            String promptsTopic, Optional<String> deadLetterTopic, StreamDefaults defaults) {
        this.engine = engine;
        this.clients = clients;
        this.cluster = cluster;
        this.streamsTopic = streamsTopic;
        this.promptsTopic = promptsTopic;
        this.defaults = defaults;
        this.instanceId = instanceId(cluster);
        this.prompts = PromptsTopicWatcher.withoutFollower(engine, clients, deadLetterTopic);
        this.limits = engine.limits();
        this.rejections = new ControlRejections(engine.metrics(), clients, deadLetterTopic);
        int session = (int) cluster.sessionTimeout().toMillis();
        this.streams = clients.consumer("samstream-cluster-" + instanceId, Map.of(
                ConsumerConfig.GROUP_ID_CONFIG, cluster.group(),
                ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, instanceId,
                ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName(),
                ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, session,
                ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, Math.max(100, session / 5),
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"), new StringDeserializer(), new ByteArrayDeserializer());
        this.promptsConsumer = clients.consumer("samstream-cluster-prompts-" + instanceId, Map.of(
                ConsumerConfig.GROUP_ID_CONFIG, cluster.group() + ".prompts",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest"), new StringDeserializer(), new ByteArrayDeserializer());
        this.state = new StateWriter(clients.producer("samstream-cluster-state-" + instanceId, Map.of(
                ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.LINGER_MS_CONFIG, 5,
                ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4"), new StringSerializer(), new ByteArraySerializer()),
                cluster.stateTopic(), instanceId, limits, engine.metrics());
        this.stateReader = clients.consumer("samstream-cluster-state-reader-" + instanceId,
                Map.of(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false), new StringDeserializer(),
                new ByteArrayDeserializer());
        this.thread = new Thread(this::run, "samstream-cluster");
        this.thread.setDaemon(true);
    }

    /**
     * Creates the streams, prompts and state topics when missing ({@code partitions} each; streams and state
     * compacted), checks that the three have one partition count, and joins the group.
     *
     * @throws IllegalStateException naming the topics, when their partition counts differ
     */
    public static ClusterMember start(Engine engine, KafkaClients clients, ClusterSettings cluster, String streamsTopic,
            String promptsTopic, Optional<String> deadLetterTopic, StreamDefaults defaults) {
        TopicFollower.createIfMissing(clients, streamsTopic, cluster.partitions(), true);
        TopicFollower.createIfMissing(clients, promptsTopic, cluster.partitions(), false);
        TopicFollower.createIfMissing(clients, cluster.stateTopic(), cluster.partitions(), true);
        checkCoPartitioned(clients, List.of(streamsTopic, promptsTopic, cluster.stateTopic()));
        ClusterMember m = new ClusterMember(engine, clients, cluster, streamsTopic, promptsTopic, deadLetterTopic,
                defaults);
        m.streams.subscribe(List.of(streamsTopic), m.new Listener());
        m.thread.start();
        log.info("cluster: engine {} joined group {} on {} (prompts {}, state {}, {} partitions, session timeout {} s)",
                m.instanceId, cluster.group(), streamsTopic, promptsTopic, cluster.stateTopic(), cluster.partitions(),
                cluster.sessionTimeout().toSeconds());
        return m;
    }

    private static void checkCoPartitioned(KafkaClients clients, List<String> topics) {
        Map<String, Integer> counts = new HashMap<>();
        try (Admin admin = clients.admin("samstream-topics", Map.of())) {
            long deadline = System.nanoTime() + KAFKA_WAIT.toNanos();
            while (true) {
                try {
                    Map<String, TopicDescription> d = admin.describeTopics(topics).allTopicNames()
                            .get(KAFKA_WAIT.toSeconds(), TimeUnit.SECONDS);
                    d.forEach((t, desc) -> counts.put(t, desc.partitions().size()));
                    break;
                } catch (java.util.concurrent.ExecutionException e) {
                    // Topics created a moment ago may not be known to every broker yet.
                    if (!(e.getCause() instanceof org.apache.kafka.common.errors.RetriableException)
                            || System.nanoTime() > deadline) {
                        throw e;
                    }
                    Thread.sleep(100);
                }
            }
        } catch (Exception e) {
            throw new IllegalStateException("cluster: cannot describe the topics " + topics + ": " + Errors.describe(e), e);
        }
        if (new HashSet<>(counts.values()).size() > 1) {
            throw new IllegalStateException("cluster: the streams, prompts and state topics must have one partition count"
                    + " (a stream's key must land in the same partition of each), they have " + counts);
        }
    }

    /** The {@code group.instance.id} of an engine of {@code cluster}: its configured instance id, or the host name. */
    public static String instanceId(ClusterSettings cluster) {
        return cluster.instanceId().orElseGet(ClusterMember::hostName);
    }

    private static String hostName() {
        String env = System.getenv("HOSTNAME");
        if (env != null && !env.isBlank()) {
            return env.trim();
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            throw new IllegalStateException("cluster: no samstream.cluster.instance-id and no host name: "
                    + e.getMessage(), e);
        }
    }

    /** This engine's {@code group.instance.id}. */
    public String instanceId() {
        return instanceId;
    }

    /** The streams-topic partitions assigned to this engine now. */
    public Set<Integer> ownedPartitions() {
        return ownedView;
    }

    /**
     * Where this engine stands in its group, for the readiness probe.
     *
     * @param running    its group loop runs (false once closed, or stopped by an error: then {@code stoppedBy} says why)
     * @param joined     a member of the group: assigned (possibly no partitions) since it last lost its partitions
     * @param partitions the streams-topic partitions it owns now
     * @param stoppedBy  why its group loop stopped, when an error stopped it
     */
    public record Membership(boolean running, boolean joined, Set<Integer> partitions, Optional<String> stoppedBy) {}

    /** Where this engine stands in its group now. */
    public Membership membership() {
        return new Membership(!closed && thread.isAlive(), joined, ownedView, Optional.ofNullable(stoppedBy));
    }

    /** State records written so far. */
    public long statesWritten() {
        return state.written();
    }

    /** Streams started here from another engine's state. */
    public long resumed() {
        return resumed.get();
    }

    /** Tracks taken up from other engines' states. */
    public long tracksTakenUp() {
        return tracksTakenUp.get();
    }

    /**
     * Whether this engine follows its group: true from its start until the member thread ends (closed, or Kafka
     * failing past its timeouts). A readiness probe reports not ready when false; no record makes it false.
     */
    public boolean following() {
        return !stopped.isDone();
    }

    /**
     * Completes when the member thread ended: with null when closed, else with the failure that ended it (the
     * engine then no longer follows its group and should be restarted).
     */
    public CompletionStage<Throwable> stopped() {
        return stopped;
    }

    /** The prompts handled here (accepted and rejected counts). */
    public PromptsTopicWatcher prompts() {
        return prompts;
    }

    private void run() {
        Throwable failure = null;
        try {
            while (!closed) {
                for (ConsumerRecord<String, byte[]> r : streams.poll(POLL)) {
                    try {
                        definition(r);
                    } catch (RuntimeException e) {
                        // Whatever one record does, it is skipped for its stream alone; the group goes on.
                        rejections.reject("streams", r, ControlRejected.ERROR, Errors.describe(e));
                    }
                }
                for (Runnable task; (task = tasks.poll()) != null; ) {
                    task.run();
                }
                promptsReady();
                if (!promptsAssigned.isEmpty()) {
                    handlePrompts();
                }
            }
        } catch (WakeupException e) {
            // closing
        } catch (RuntimeException e) {
            failure = e;
            stoppedBy = Errors.describe(e);
            log.error("cluster: engine {} stopped following the group (Kafka: {}); it reports not ready and"
                    + " `samstream run` exits for its supervisor to restart it", instanceId, Errors.describe(e), e);
        } finally {
            joined = false;
            ShutdownBudget b = closing;
            try {
                // Revokes (writes the streams' states) without leaving: static member.
                streams.close(b == null ? KAFKA_WAIT : b.until(0.75));
            } catch (RuntimeException e) {
                log.warn("cluster: closing the group consumer: {}", Errors.describe(e));
            }
            Duration consumers = b == null ? Duration.ofSeconds(5) : min(Duration.ofSeconds(5), b.until(0.85));
            promptsConsumer.close(consumers);
            stateReader.close(consumers);
            // Sends the states still buffered, as long as the budget allows.
            state.close(b == null ? Duration.ofSeconds(10) : b.left());
            prompts.close();
            rejections.close();
            stopped.complete(failure);
        }
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    private void handlePrompts() {
        Map<TopicPartition, OffsetAndMetadata> handled = new HashMap<>();
        Set<String> changed = new HashSet<>();
        for (ConsumerRecord<String, byte[]> r : promptsConsumer.poll(POLL)) {
            handled.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
            if (r.key() != null && r.offset() <= state.promptsApplied(r.key())) {
                // Applied by the engine before us (its state holds it), which stopped before committing it.
                log.info("cluster: prompts: the message at {}-{}@{} is in stream {}'s state already: not applied again",
                        r.topic(), r.partition(), r.offset(), LogSafe.of(r.key()));
                continue;
            }
            try {
                String stream = prompts.handle(r, state.budget()::check);
                if (stream != null) {
                    state.budget().accepted(stream);
                    state.applied(stream, r.offset());
                    changed.add(stream);
                }
            } catch (RuntimeException e) {
                log.error("cluster: prompts: skipped the record at {}-{}@{}: {}", r.topic(), r.partition(), r.offset(),
                        Errors.describe(e), e);
            }
        }
        if (!changed.isEmpty()) {
            // The changes in the streams' states before their offsets are committed: a next owner has them.
            changed.forEach(id -> engine.stream(id).ifPresent(h -> {
                String json = definitions.get(id);
                if (json != null) {
                    state.promptsChanged(h, json);
                }
            }));
            state.flush();
        }
        if (!handled.isEmpty()) {
            // Before the next message: a partition's next owner goes on after the last one handled here.
            promptsConsumer.commitSync(handled, KAFKA_WAIT);
        }
    }

    /** Assigned partitions whose definitions were all read: their prompts are read from now on. */
    private void promptsReady() {
        List<Integer> ready = new ArrayList<>();
        loading.forEach((p, end) -> {
            if (streams.position(new TopicPartition(streamsTopic, p), KAFKA_WAIT) >= end) {
                ready.add(p);
            }
        });
        if (ready.isEmpty()) {
            return;
        }
        ready.forEach(loading::remove);
        promptsAssigned.addAll(ready);
        List<TopicPartition> all = promptsAssigned.stream().map(p -> new TopicPartition(promptsTopic, p)).toList();
        List<TopicPartition> added = ready.stream().map(p -> new TopicPartition(promptsTopic, p)).toList();
        promptsConsumer.assign(all);
        Map<TopicPartition, OffsetAndMetadata> committed = promptsConsumer.committed(new HashSet<>(added), KAFKA_WAIT);
        Map<TopicPartition, OffsetAndMetadata> start = new HashMap<>();
        for (TopicPartition tp : added) {
            OffsetAndMetadata c = committed.get(tp);
            if (c != null) {
                promptsConsumer.seek(tp, c.offset());
            } else {
                // Never read by any engine: from now on, and say so for the next owner.
                promptsConsumer.seekToEnd(List.of(tp));
                start.put(tp, new OffsetAndMetadata(promptsConsumer.position(tp, KAFKA_WAIT)));
            }
        }
        if (!start.isEmpty()) {
            promptsConsumer.commitSync(start, KAFKA_WAIT);
        }
        log.info("cluster: engine {} reads prompts of partitions {}", instanceId, promptsAssigned);
    }

    private void definition(ConsumerRecord<String, byte[]> r) {
        String id = r.key();
        if (id != null && StreamSpec.ID.matcher(id).matches()) {
            partitionOf.put(id, r.partition());
        }
        if (r.value() == null && id != null && StreamSpec.ID.matcher(id).matches()) {
            definitions.remove(id);
            states.remove(id);
            if (engine.remove(id)) {
                log.info("stream definitions: {} removed", id);
            }
            state.removed(id);
            return;
        }
        String json = r.value() == null ? null : new String(r.value(), StandardCharsets.UTF_8);
        if (json != null && json.equals(definitions.get(id))) {
            return;
        }
        StreamSpec spec;
        try {
            spec = DefinitionRecord.parse(id, r.value(), defaults, limits);
        } catch (ControlRejected e) {
            rejections.reject("streams", r, e.reason(), e.getMessage());
            return;
        }
        definitions.put(id, json);
        ConsumerRecord<String, byte[]> stored = states.remove(id);
        StreamStart start = startOf(spec, json, stored);
        if (start == null) {
            return;
        }
        start(spec, json, start, stored);
    }

    /** Starts a stream here; a file whose state claimed more frames than it holds starts again from its first. */
    private void start(StreamSpec spec, String json, StreamStart start, ConsumerRecord<String, byte[]> stored) {
        try {
            StreamHandle h = engine.add(spec, start);
            h.result().whenComplete((res, e) -> {
                if (res == null || res.state() != StreamHandle.State.ENDED || spec.isLive()) {
                    return;
                }
                if (start.skipFrames() > 0 && h.skipped() < start.skipFrames() && stored != null) {
                    // The state said frame N was published, the file ended before it: the state is wrong.
                    tasks.add(() -> {
                        rejections.reject("state", stored, ControlRejected.FRAME_BEYOND_END, "stream " + spec.id()
                                + ": the state's frame " + (start.skipFrames() - 1) + " lies past the file's end ("
                                + h.skipped() + " frames): it starts again from its first frame");
                        if (json.equals(definitions.get(spec.id())) && engine.stream(spec.id()).isEmpty()) {
                            state.noPromptsApplied(spec.id());
                            start(spec, json, fresh(json), null);
                        }
                    });
                    return;
                }
                state.write(h, json, true, Optional.empty());
            });
        } catch (RuntimeException e) {
            log.error("stream definitions: {} not started: {}", spec.id(), Errors.describe(e));
        }
    }

    private StreamStart.Progress progress(String json) {
        return (h, frame, pts) -> {
            if (frame % cluster.stateEveryFrames() == 0) {
                state.write(h, json, false, h.tracker().takeState(frame));
            }
        };
    }

    private StreamStart fresh(String json) {
        return new StreamStart(0, 0, Optional.empty(), Optional.empty(), cluster.stateEveryFrames(), progress(json));
    }

    /**
     * Fresh, or after the stored state when it is valid ({@link StateRecord}) and of this definition; null for a
     * file that ended already. An invalid state is rejected and the stream starts fresh.
     */
    private StreamStart startOf(StreamSpec spec, String json, ConsumerRecord<String, byte[]> record) {
        StateRecord stored = null;
        if (record != null) {
            try {
                stored = StateRecord.parse(record.key(), record.value(), limits);
            } catch (ControlRejected e) {
                rejections.reject("state", record, e.reason(), "stream " + spec.id() + ": " + e.getMessage()
                        + "; it starts from its first frame");
            }
        }
        if (stored == null || !stored.definition().equals(StateWriter.hash(json))) {
            state.noPromptsApplied(spec.id());
            return fresh(json);
        }
        long frame = stored.frame();
        if (stored.ended() && !spec.isLive()) {
            log.info("cluster: stream {} ended on engine {} already (frame {}): not started", spec.id(),
                    LogSafe.of(stored.engine()), frame);
            return null;
        }
        state.applied(spec.id(), stored.promptsOffset());
        Optional<PromptsState> inForce = stored.prompts();
        // The mode that wrote it named its part; the stream's tracker takes up its own mode's state only.
        Optional<MemoryTrackerState> memory = stored.memory();
        Optional<TrackingState> tracking = stored.tracker().<TrackingState>map(t -> t).or(() -> memory.map(m -> m));
        resumed.incrementAndGet();
        List<Integer> ids = tracking.map(TrackingState::ids).orElse(List.of());
        tracksTakenUp.addAndGet(ids.size());
        log.info("cluster: stream {} taken over from engine {}: going on after frame {} (pts {} ms) with {} track(s) {}"
                + " and {} prompt change(s)", spec.id(), LogSafe.of(stored.engine()), frame, stored.ptsMs(), ids.size(),
                LogSafe.of(ids), inForce.map(PromptsState::changes).orElse(0L));
        return new StreamStart(frame + 1, spec.isLive() ? 0 : frame + 1, tracking, inForce,
                cluster.stateEveryFrames(), progress(json));
    }

    /** Streams of these partitions stop; with {@code keep}, each one's state is written once it stopped. */
    private void release(Collection<TopicPartition> partitions, boolean keep) {
        Set<Integer> ps = new HashSet<>();
        partitions.forEach(tp -> ps.add(tp.partition()));
        List<StreamHandle> stopping = new ArrayList<>();
        for (Map.Entry<String, Integer> e : partitionOf.entrySet()) {
            if (ps.contains(e.getValue())) {
                engine.stream(e.getKey()).ifPresent(stopping::add);
            }
        }
        stopping.forEach(h -> engine.remove(h.id()));
        ShutdownBudget b = closing;
        long deadline = System.nanoTime() + (b == null ? STOP_WAIT : b.until(0.6)).toNanos();
        int unwritten = 0;
        for (StreamHandle h : stopping) {
            try {
                h.result().toCompletableFuture().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (Exception e) {
                log.warn("cluster: stream {} still publishing, its last state not written", h.id());
                unwritten++;
                continue; // the state topic keeps its last periodic state: at least once from there
            }
            String json = definitions.get(h.id());
            StreamHandle.Result r = h.result().toCompletableFuture().getNow(null);
            // A file that ended wrote its state already; a failed stream keeps its last periodic one.
            if (keep && json != null && h.lastPublished() >= 0 && r != null && r.state() == StreamHandle.State.REMOVED) {
                state.write(h, json, false, h.tracker().stateAfter(h.lastPublished()));
            }
        }
        if (keep && b == null) {
            state.flush(); // when closing, the producer's close sends them, within the budget
        }
        partitionOf.values().removeIf(ps::contains);
        definitions.keySet().removeIf(id -> !partitionOf.containsKey(id));
        state.retain(partitionOf::containsKey);
        owned.removeAll(ps);
        ownedView = Set.copyOf(owned);
        ps.forEach(loading::remove);
        if (promptsAssigned.removeAll(ps)) {
            promptsConsumer.assign(promptsAssigned.stream().map(p -> new TopicPartition(promptsTopic, p)).toList());
        }
        if (!stopping.isEmpty()) {
            log.info("cluster: engine {} handed over {} stream(s) of partitions {}{}", instanceId, stopping.size(),
                    new TreeSet<>(ps), !keep ? "" : unwritten == 0 ? " (states written)"
                            : " (" + unwritten + " still publishing: their last periodic states stand)");
        }
    }

    private final class Listener implements ConsumerRebalanceListener {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            if (!partitions.isEmpty()) {
                log.info("cluster: engine {} gives up partitions {}", instanceId, numbers(partitions));
                release(partitions, true);
            }
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            if (!partitions.isEmpty()) {
                joined = false;
                log.warn("cluster: engine {} lost partitions {} (out of the group): their streams stop", instanceId,
                        numbers(partitions));
                release(partitions, false);
            }
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            joined = true; // called after every rebalance, with no new partitions too
            if (partitions.isEmpty()) {
                return;
            }
            Set<Integer> ps = numbers(partitions);
            log.info("cluster: engine {} takes partitions {}", instanceId, ps);
            states.putAll(StateTopicReader.latest(stateReader, cluster.stateTopic(), ps, POLL, KAFKA_WAIT));
            streams.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = streams.endOffsets(partitions, KAFKA_WAIT);
            end.forEach((tp, off) -> loading.put(tp.partition(), off));
            owned.addAll(ps);
            ownedView = Set.copyOf(owned);
        }
    }

    private static Set<Integer> numbers(Collection<TopicPartition> partitions) {
        Set<Integer> out = new TreeSet<>();
        partitions.forEach(tp -> out.add(tp.partition()));
        return out;
    }

    /** Leaves: the streams stop and their states are written (static membership: the group waits for a restart). */
    @Override
    public void close() {
        close(STOP_WAIT.plus(KAFKA_WAIT));
    }

    /**
     * As {@link #close()}, within {@code timeout} in all: its streams get up to 60 % of it to publish what they
     * decoded (their states written then), the group consumer up to 75 %, the other consumers up to 85 %, the
     * state producer what is left to send the states. A state not written by then leaves the stream's last
     * periodic one in the state topic: the next engine goes on from there (at least once).
     */
    public void close(Duration timeout) {
        closing = ShutdownBudget.of(timeout);
        closed = true;
        streams.wakeup();
        try {
            thread.join(Math.max(1, timeout.toMillis()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
