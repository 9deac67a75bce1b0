import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.kafka.MaskRecordDeserializer;
import io.samstream.gpu.mask.CocoRle;
import java.awt.image.BufferedImage;
import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads samstream's mask topic with samstream's own record classes and writes one object's mask as a PNG
 * (white on black). One file, run by Java's source launcher against the samstream jar:
 *
 * <pre>
 * java -cp stream/target/samstream.jar examples/clients/java/MaskConsumer.java \
 *     --bootstrap 127.0.0.1:9092 --stream cam-1 --object 1 --out mask.png
 * </pre>
 *
 * Options: --topic (default samstream.masks), --stream, --object (default: a record's first object),
 * --out (default mask.png), --from-beginning, --timeout SECONDS (default 60, without a record).
 */
public final class MaskConsumer {
    public static void main(String[] args) throws Exception {
        Map<String, String> opt = options(args);
        if (!opt.containsKey("bootstrap")) {
            System.err.println("usage: MaskConsumer --bootstrap HOST:PORT [--topic T] [--stream ID] [--object N]"
                    + " [--out mask.png] [--from-beginning] [--timeout SECONDS]");
            System.exit(2);
        }
        String topic = opt.getOrDefault("topic", "samstream.masks");
        Integer object = opt.containsKey("object") ? Integer.valueOf(opt.get("object")) : null;
        Duration timeout = Duration.ofSeconds(Long.parseLong(opt.getOrDefault("timeout", "60")));
        Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, opt.get("bootstrap"),
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        // MaskRecordDeserializer checks the samstream.schema header and parses the JSON into a MaskRecord.
        try (KafkaConsumer<String, MaskRecord> consumer = new KafkaConsumer<>(config, new StringDeserializer(),
                new MaskRecordDeserializer())) {
            List<TopicPartition> partitions = new ArrayList<>();
            consumer.partitionsFor(topic, timeout).forEach(p -> partitions.add(new TopicPartition(topic, p.partition())));
            consumer.assign(partitions); // every partition, no consumer group
            if (opt.containsKey("from-beginning")) {
                consumer.seekToBeginning(partitions);
            } else {
                consumer.seekToEnd(partitions);
            }
            long deadline = System.nanoTime() + timeout.toNanos();
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<String, MaskRecord> r : consumer.poll(Duration.ofSeconds(1))) {
                    deadline = System.nanoTime() + timeout.toNanos();
                    MaskRecord record = r.value();
                    if (record == null || (opt.containsKey("stream") && !record.stream().equals(opt.get("stream")))) {
                        continue;
                    }
                    System.out.println(record.stream() + " frame " + record.frame() + ": " + record.objects().size()
                            + " objects " + record.objects().stream().map(o -> o.id() + " (area " + o.area() + ")").toList());
                    for (MaskRecord.ObjectMask o : record.objects()) {
                        if (object == null || o.id() == object) {
                            File out = new File(opt.getOrDefault("out", "mask.png"));
                            ImageIO.write(draw(o.mask()), "png", out);
                            System.out.println("wrote " + out + ": object " + o.id() + " of frame " + record.frame());
                            return;
                        }
                    }
                }
            }
        }
        System.err.println("no record with the object within " + timeout.toSeconds() + " s");
        System.exit(1);
    }

    /** The mask white on black: the COCO RLE decoded by samstream's CocoRle (row-major out). */
    static BufferedImage draw(MaskRecord.Rle rle) {
        boolean[] mask = CocoRle.decode(rle.counts(), rle.height(), rle.width());
        BufferedImage image = new BufferedImage(rle.width(), rle.height(), BufferedImage.TYPE_BYTE_GRAY);
        for (int y = 0; y < rle.height(); y++) {
            for (int x = 0; x < rle.width(); x++) {
                image.getRaster().setSample(x, y, 0, mask[y * rle.width() + x] ? 255 : 0);
            }
        }
        return image;
    }

    /** {@code --name value} pairs, and {@code --from-beginning} alone. */
    private static Map<String, String> options(String[] args) {
        Map<String, String> opt = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            String name = args[i].replaceFirst("^--", "");
            if (name.equals("from-beginning")) {
                opt.put(name, "");
            } else if (i + 1 < args.length) {
                opt.put(name, args[++i]);
            }
        }
        return opt;
    }
}
