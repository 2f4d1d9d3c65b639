package io.snowstamp.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/** A TCP port on 127.0.0.1 that was free a moment ago, for a process that must keep its port across restarts. */
public final class FreePort {
    private FreePort() {
    }

    public static int pick() {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress("127.0.0.1", 0));
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free port on 127.0.0.1", e);
        }
    }
}
