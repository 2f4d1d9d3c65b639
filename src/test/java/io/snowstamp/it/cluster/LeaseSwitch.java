package io.snowstamp.it.cluster;

import io.snowstamp.testing.ChildJvm;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Enumeration;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * The stamper's membership lease, as the cluster tests see it: whether the jar has one, and the
 * test run's switch for it.
 *
 * <p>{@code mvn verify -Dcluster.lease=off ...} starts every stamper of the cluster tests with
 * {@code -Dsnowstamp.test.lease=off} (the lease then stays out of the way: the behaviour before it),
 * to show that the partial-partition test fails without it. The lease reads that property, so a jar
 * whose classes never name it has no lease at all.
 */
final class LeaseSwitch {
    /** The stamper's own switch (a JVM system property of the stamper process). */
    static final String STAMPER_PROPERTY = "snowstamp.test.lease";
    /** This test run's switch: {@code -Dcluster.lease=off}. */
    static final String TEST_PROPERTY = "cluster.lease";

    private static Boolean inJar;

    private LeaseSwitch() {
    }

    /** True when the test run asks for stampers without the lease. */
    static boolean off() {
        return "off".equals(System.getProperty(TEST_PROPERTY));
    }

    /** The JVM flags that pass this run's switch on to a stamper child (none unless it is off). */
    static List<String> jvmArgs() {
        return off() ? List.of("-D" + STAMPER_PROPERTY + "=off") : List.of();
    }

    /** Whether a class of snowstamp in the shaded jar names {@link #STAMPER_PROPERTY}: the jar has a lease. */
    static synchronized boolean inJar() throws IOException {
        if (inJar == null) {
            inJar = scan();
        }
        return inJar;
    }

    private static boolean scan() throws IOException {
        byte[] needle = STAMPER_PROPERTY.getBytes(StandardCharsets.US_ASCII);
        try (ZipFile jar = new ZipFile(ChildJvm.jar().toFile())) {
            Enumeration<? extends ZipEntry> entries = jar.entries();
            while (entries.hasMoreElements()) {
                ZipEntry entry = entries.nextElement();
                if (entry.getName().startsWith("io/snowstamp/") && entry.getName().endsWith(".class")) {
                    try (InputStream in = jar.getInputStream(entry)) {
                        if (contains(in.readAllBytes(), needle)) {
                            return true;
                        }
                    }
                }
            }
        }
        return false;
    }

    private static boolean contains(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }
}
