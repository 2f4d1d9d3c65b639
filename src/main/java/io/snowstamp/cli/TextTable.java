package io.snowstamp.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;

/**
 * A plain-text table for a terminal: a header row, columns separated by two spaces, numeric
 * columns right-aligned, no trailing blanks. Rows are kept until {@link #print}.
 */
final class TextTable {
    private static final Pattern NUMBER = Pattern.compile("[-+]?\\d+");

    private final List<String> headers;
    private final List<List<String>> rows = new ArrayList<>();

    TextTable(String... headers) {
        this.headers = List.of(headers);
    }

    void add(Object... cells) {
        if (cells.length != headers.size()) {
            throw new IllegalArgumentException(cells.length + " cells for " + headers.size() + " columns");
        }
        rows.add(Arrays.stream(cells).map(String::valueOf).toList());
    }

    boolean isEmpty() {
        return rows.isEmpty();
    }

    void print(PrintWriter out) {
        int columns = headers.size();
        int[] width = new int[columns];
        boolean[] right = new boolean[columns];
        for (int c = 0; c < columns; c++) {
            width[c] = headers.get(c).length();
            right[c] = !rows.isEmpty();
            for (List<String> row : rows) {
                width[c] = Math.max(width[c], row.get(c).length());
                right[c] &= NUMBER.matcher(row.get(c)).matches() || row.get(c).equals("-");
            }
        }
        line(out, headers, width, right);
        rows.forEach(row -> line(out, row, width, right));
        out.flush();
    }

    private static void line(PrintWriter out, List<String> cells, int[] width, boolean[] right) {
        StringBuilder line = new StringBuilder();
        for (int c = 0; c < cells.size(); c++) {
            String cell = cells.get(c);
            String pad = " ".repeat(width[c] - cell.length());
            line.append(c == 0 ? "" : "  ").append(right[c] ? pad + cell : cell + pad);
        }
        out.println(line.toString().stripTrailing());
    }
}
