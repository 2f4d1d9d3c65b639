package io.snowstamp.testing.cluster;

import io.snowstamp.testing.ChildJvm;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.URISyntaxException;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

/**
 * Makes TCP ports of a network namespace's loopback reachable on the same ports of this JVM's
 * loopback, so that the test itself (its Admin client, load producer, output observer and
 * {@code verify} runs) talks to the Kafka nodes inside the namespace with plain Kafka clients and
 * the addresses the brokers advertise ({@code 127.0.0.1:PORT}).
 *
 * <p>No address outside 127.0.0.0/8 is involved, and no interface is added: a connection to
 * {@code 127.0.0.1:PORT} here is carried over a Unix socket (a file, which both namespaces see) to
 * a small process inside the namespace ({@link #main}), which connects to {@code 127.0.0.1:PORT}
 * there. Inside the namespace that last hop is an ordinary loopback connection of a root process:
 * random packet loss applies to it as to everything there; rules that name a stamper's uid do not.
 */
public final class LoopbackBridge implements AutoCloseable {
    private static final int BUFFER = 64 * 1024;

    private final ChildJvm inside;
    private final List<ServerSocketChannel> listeners = new ArrayList<>();
    private final List<SocketChannel> open = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    private LoopbackBridge(ChildJvm inside) {
        this.inside = inside;
    }

    /**
     * Starts the inside half in {@code netns} (its sockets in {@code socketDir}, its log in {@code logDir}) and
     * listens on {@code 127.0.0.1:port} here for every port of {@code ports}.
     */
    public static LoopbackBridge open(Netns netns, Path socketDir, Path logDir, List<Integer> ports) throws Exception {
        Files.createDirectories(socketDir);
        List<String> command = new ArrayList<>(netns.exec());
        command.addAll(List.of(ChildJvm.java(), "-Xmx64m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:-UsePerfData",
                "-cp", testClasses().toString(), LoopbackBridge.class.getName(), socketDir.toString()));
        ports.forEach(port -> command.add(String.valueOf(port)));
        LoopbackBridge bridge = new LoopbackBridge(ChildJvm.startCommand(logDir, "bridge", socketDir, Map.of(), command));
        try {
            bridge.inside.awaitOutput("ready", 120);
            for (int port : ports) {
                ServerSocketChannel listener = ServerSocketChannel.open();
                listener.bind(new InetSocketAddress("127.0.0.1", port));
                bridge.listeners.add(listener);
                Path socket = socketDir.resolve(port + ".sock");
                bridge.accept(listener, () -> connect(UnixDomainSocketAddress.of(socket), StandardProtocolFamily.UNIX), "bridge-" + port);
            }
        } catch (Exception | AssertionError e) {
            bridge.close();
            throw e;
        }
        return bridge;
    }

    /** The directory (or jar) this class was loaded from: the inside half needs nothing else (JDK classes only). */
    private static Path testClasses() throws URISyntaxException {
        return Path.of(LoopbackBridge.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    /** The inside half: {@code LoopbackBridge SOCKET_DIR PORT...}; prints {@code ready} once every socket listens. */
    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        LoopbackBridge bridge = new LoopbackBridge(null);
        for (int i = 1; i < args.length; i++) {
            int port = Integer.parseInt(args[i]);
            Path socket = dir.resolve(port + ".sock");
            Files.deleteIfExists(socket);
            ServerSocketChannel listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            listener.bind(UnixDomainSocketAddress.of(socket));
            bridge.accept(listener, () -> connect(new InetSocketAddress("127.0.0.1", port), StandardProtocolFamily.INET),
                    "bridge-" + port);
        }
        System.out.println("ready");
        System.out.flush();
        Thread.currentThread().join();
    }

    private static SocketChannel connect(SocketAddress address, StandardProtocolFamily family) {
        try {
            SocketChannel channel = SocketChannel.open(family);
            channel.connect(address);
            return channel;
        } catch (IOException e) {
            return null;
        }
    }

    private void accept(ServerSocketChannel listener, Supplier<SocketChannel> target, String name) {
        Thread thread = new Thread(() -> {
            while (!closed) {
                try {
                    SocketChannel client = listener.accept();
                    SocketChannel server = target.get();
                    if (server == null) {
                        client.close();     // nothing listens there (a node down): the client sees a refused connection
                        continue;
                    }
                    open.add(client);
                    open.add(server);
                    pump(client, server, name + "-up");
                    pump(server, client, name + "-down");
                } catch (IOException e) {
                    if (!listener.isOpen()) {
                        return;
                    }
                }
            }
        }, name);
        thread.setDaemon(true);
        thread.start();
    }

    /** Copies {@code from} to {@code to} until end of stream or an error, then closes both (Kafka never half-closes). */
    private void pump(SocketChannel from, SocketChannel to, String name) {
        Thread thread = new Thread(() -> {
            ByteBuffer buffer = ByteBuffer.allocate(BUFFER);
            try {
                while (from.read(buffer) >= 0) {
                    buffer.flip();
                    while (buffer.hasRemaining()) {
                        to.write(buffer);
                    }
                    buffer.clear();
                }
            } catch (IOException e) {
                // the other side went away: close both
            }
            closeQuietly(from);
            closeQuietly(to);
        }, name);
        thread.setDaemon(true);
        thread.start();
    }

    private void closeQuietly(SocketChannel channel) {
        try {
            channel.close();
        } catch (IOException e) {
            // closing anyway
        }
        open.remove(channel);
    }

    /** Stops listening here, drops every bridged connection and stops the inside half. */
    @Override
    public void close() throws InterruptedException {
        closed = true;
        for (ServerSocketChannel listener : listeners) {
            try {
                listener.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
        open.forEach(this::closeQuietly);
        if (inside != null) {
            inside.close();
        }
    }
}
