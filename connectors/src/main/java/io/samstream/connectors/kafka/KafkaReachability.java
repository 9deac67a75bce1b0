package io.samstream.connectors.kafka;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;

/**
 * Whether a Kafka cluster answers, asked once at start: without it an engine pointed at a wrong or down
 * broker would only find out when its first record times out (a minute later, per record).
 */
public final class KafkaReachability {
    private KafkaReachability() {}

    /**
     * Asks the cluster for its brokers within {@code timeout}, with the shared client settings
     * (security: protocol, SASL, trust stores), so that refused credentials fail here too.
     *
     * @throws IllegalStateException naming the bootstrap servers tried and why, when none answers in time
     */
    public static void check(KafkaClients clients, Duration timeout) {
        String bootstrapServers = clients.bootstrapServers();
        int ms = (int) Math.max(1, timeout.toMillis());
        try (Admin admin = clients.admin("samstream-reachability", Map.of(
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, ms,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, ms))) {
            int brokers = admin.describeCluster(new DescribeClusterOptions().timeoutMs(ms)).nodes()
                    .get(ms + 1000L, TimeUnit.MILLISECONDS).size();
            if (brokers == 0) {
                throw new IllegalStateException("Kafka at " + bootstrapServers + " answered with no brokers");
            }
        } catch (ExecutionException e) {
            throw unreachable(bootstrapServers, timeout, e.getCause() == null ? e : e.getCause());
        } catch (TimeoutException e) {
            throw unreachable(bootstrapServers, timeout, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw unreachable(bootstrapServers, timeout, e);
        } catch (org.apache.kafka.common.KafkaException e) {
            throw unreachable(bootstrapServers, timeout, e);
        }
    }

    private static IllegalStateException unreachable(String servers, Duration timeout, Throwable cause) {
        if (cause instanceof org.apache.kafka.common.errors.AuthenticationException) {
            return new IllegalStateException("Kafka at " + servers + " refused the engine (samstream.kafka.client: "
                    + "security.protocol, sasl.*, ssl.*): " + cause.getClass().getSimpleName()
                    + (cause.getMessage() == null ? "" : ": " + cause.getMessage()), cause);
        }
        return new IllegalStateException("Kafka is not reachable at " + servers + " (samstream.kafka.bootstrap-servers):"
                + " no broker answered within " + timeout.toSeconds() + " s (" + cause.getClass().getSimpleName()
                + (cause.getMessage() == null ? "" : ": " + cause.getMessage()) + ")", cause);
    }
}
