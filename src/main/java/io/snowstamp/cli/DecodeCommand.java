package io.snowstamp.cli;

import io.snowstamp.config.SnowstampConfig;
import io.snowstamp.id.DecodedId;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.time.Instant;
import java.util.List;
import java.util.concurrent.Callable;

@Command(name = "decode", header = "Decodes IDs into time, worker, datacenter and sequence.",
        description = "Decodes IDs with the configured layout (id.* keys): one JSON object per ID, "
                + "{\"id\",\"time\",\"worker\",\"datacenter\",\"sequence\"}, time as an ISO-8601 instant.",
        footer = {"", "Examples:", "  snowstamp decode 1234567890123456789", "  snowstamp decode --set id.preset=sonyflake 1234567890123"})
final class DecodeCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ConfigOptions options;

    @Parameters(paramLabel = "ID", arity = "1..*", description = "IDs in decimal")
    List<String> ids;

    @Override
    public Integer call() throws Exception {
        SnowstampConfig config = options.load(java.util.Map.of());
        for (String text : ids) {
            long id;
            try {
                id = Long.parseLong(text.trim());
            } catch (NumberFormatException e) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                        "ID '" + text + "' is invalid: accepted a decimal number 0.." + Long.MAX_VALUE);
            }
            if (id < 0 || id > config.ids().layout().maxId()) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(), "ID '" + text + "' is invalid: accepted 0.."
                        + config.ids().layout().maxId() + " (" + config.ids().layout().totalBits() + " bits) in layout "
                        + config.ids().layout().fingerprint());
            }
            DecodedId decoded = config.ids().layout().decode(id);
            spec.commandLine().getOut().println(JsonText.of(new Decoded(decoded.id(),
                    Instant.ofEpochMilli(decoded.wallMillis()).toString(), decoded.worker(), decoded.datacenter(), decoded.sequence())));
        }
        return 0;
    }

    /** One line of output, in the order the description gives. */
    record Decoded(long id, String time, long worker, long datacenter, long sequence) {
    }
}
