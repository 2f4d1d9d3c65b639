/**
 * The command line: {@code Main} and one picocli class per command. Parses options, calls the
 * layers below, prints; only {@code Main.main} exits the JVM. The top layer: may use every package.
 */
package io.snowstamp.cli;
