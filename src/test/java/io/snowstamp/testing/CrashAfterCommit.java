package io.snowstamp.testing;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.DriverPropertyInfo;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;

/**
 * A JDBC driver that makes a consumer die between its database commit and its offset commit, with
 * the consumer's code unchanged: {@code jdbc:crash-after-commit:N:postgresql://...} connects to
 * {@code jdbc:postgresql://...}, and the connection's N-th {@code commit()} commits, then throws
 * {@link Crash}. The consumer's loop ends there, before {@code commitSync()}: the rows are in the
 * database, the offsets are not in Kafka, which is what a SIGKILL at that line leaves (the consumer's
 * {@code close()} then commits nothing: auto-commit is off). A restarted consumer replays the batch.
 */
public final class CrashAfterCommit implements Driver {
    private static final String PREFIX = "jdbc:crash-after-commit:";

    static {
        try {
            DriverManager.registerDriver(new CrashAfterCommit());
        } catch (SQLException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** What the N-th commit throws, after committing. */
    public static final class Crash extends SQLException {
        Crash(int commit) {
            super("crash after database commit " + commit + ", before the offset commit");
        }
    }

    private CrashAfterCommit() {
    }

    /** The URL that connects to {@code jdbcUrl} and crashes after the {@code n}-th commit (registers the driver). */
    public static String url(String jdbcUrl, int n) {
        if (!jdbcUrl.startsWith("jdbc:")) {
            throw new IllegalArgumentException(jdbcUrl);
        }
        return PREFIX + n + ":" + jdbcUrl.substring("jdbc:".length());
    }

    @Override
    public Connection connect(String url, Properties info) throws SQLException {
        if (!acceptsURL(url)) {
            return null;
        }
        String rest = url.substring(PREFIX.length());
        int n = Integer.parseInt(rest.substring(0, rest.indexOf(':')));
        Connection real = DriverManager.getConnection("jdbc:" + rest.substring(rest.indexOf(':') + 1), info);
        AtomicInteger commits = new AtomicInteger();
        InvocationHandler handler = (proxy, method, args) -> {
            try {
                Object result = method.invoke(real, args);
                if (method.getName().equals("commit") && commits.incrementAndGet() == n) {
                    throw new Crash(n);
                }
                return result;
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        };
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class}, handler);
    }

    @Override
    public boolean acceptsURL(String url) {
        return url != null && url.startsWith(PREFIX);
    }

    @Override
    public DriverPropertyInfo[] getPropertyInfo(String url, Properties info) {
        return new DriverPropertyInfo[0];
    }

    @Override
    public int getMajorVersion() {
        return 1;
    }

    @Override
    public int getMinorVersion() {
        return 0;
    }

    @Override
    public boolean jdbcCompliant() {
        return false;
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        throw new SQLFeatureNotSupportedException();
    }
}
