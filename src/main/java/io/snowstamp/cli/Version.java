package io.snowstamp.cli;

import picocli.CommandLine;

/** Version from the jar manifest (unknown when run from classes). */
final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
        String version = Main.class.getPackage().getImplementationVersion();
        return new String[] {"snowstamp " + (version == null ? "(development build)" : version)
                + ", Apache Kafka " + org.apache.kafka.common.utils.AppInfoParser.getVersion()};
    }
}
