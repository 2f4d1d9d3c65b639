package io.snowstamp.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

/**
 * A class-data-sharing archive of the stamper's classes for the integration tests' child JVMs. Every
 * child loads Kafka Streams', the Kafka clients' and snowstamp's classes anew: about 2.7 CPU-seconds
 * to its first task on the 2-core test machine, about 1.8 with this archive, and a run starts about
 * a hundred children while the suite is CPU-bound.
 *
 * <p>Built once per test JVM, in the background, as soon as the shared broker is up: a stamper child
 * on that broker with {@code -XX:ArchiveClassesAtExit}, stopped with SIGTERM once its first task has
 * started (the JVM writes the archive as it exits), then renamed into place, so a child gets a
 * complete archive or none. Children started before it is ready load their classes as before; an
 * archive older than the jar is not used (a stale one would only be refused with a warning).
 */
public final class ClassArchive {
    private static boolean building;

    private ClassArchive() {
    }

    private static Path archive() {
        return ChildJvm.jar().toAbsolutePath().resolveSibling("snowstamp-child.jsa");
    }

    /** The JVM options that use the archive when it is ready and newer than the jar; else none. */
    public static List<String> options() {
        try {
            Path archive = archive();
            if (Files.exists(archive) && Files.getLastModifiedTime(archive).compareTo(Files.getLastModifiedTime(ChildJvm.jar())) > 0) {
                return List.of("-XX:SharedArchiveFile=" + archive);
            }
        } catch (IOException e) {
            // no archive: the child loads its classes itself
        }
        return List.of();
    }

    /** Starts building the archive on {@code broker}, once per JVM, unless a current one exists; returns at once. */
    public static synchronized void buildOnce(TestBroker broker) {
        if (building || !options().isEmpty()) {
            return;
        }
        building = true;
        Thread builder = new Thread(() -> build(broker), "class-archive");
        builder.setDaemon(true);
        builder.start();
    }

    private static void build(TestBroker broker) {
        try {
            Path work = Files.createTempDirectory("snowstamp-class-archive");
            Path partial = work.resolve("snowstamp-child.jsa");
            String app = TestBroker.unique("class-archive");
            Stamper.Topics topics = new Stamper.Topics(app + "-in", app + "-out", app + "-dlq");
            for (String topic : List.of(topics.in(), topics.out(), topics.dlq())) {
                broker.createTopic(topic, 1);
            }
            Stamper stamper = Stamper.of(work, broker.bootstrapServers(), app, topics, "archive")
                    .withLogDir(work.resolve("logs")).withJvmArg("-XX:ArchiveClassesAtExit=" + partial);
            try (ChildJvm child = stamper.start()) {
                child.awaitLog("lease epoch 1 taken", 180);
                child.terminate(60);
            }
            if (Files.exists(partial)) {
                Files.move(partial, archive(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (Exception e) {
            // no archive: every child loads its classes itself, as without this class
        }
    }
}
