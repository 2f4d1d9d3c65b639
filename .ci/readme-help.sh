#!/usr/bin/env bash
# Rewrites the README's "Command reference" from the built jar (DocsTest fails when it is stale).
# Usage: mvn -q -B -DskipTests package && .ci/readme-help.sh
set -euo pipefail
cd "$(dirname "$0")/.."
jar=target/snowstamp.jar
head -n "$(grep -n '^## Command reference' README.md | cut -d: -f1)" README.md > README.md.new
for c in "" demo run broker "topics apply" produce consume decode verify bench "changelog inspect" "changelog history" "changelog export" "changelog import" recover "tags create" "tags set-step" "tags list" "workers list" "workers release"; do
  printf '\n### `snowstamp%s --help`\n\n```\n' "${c:+ $c}"
  # shellcheck disable=SC2086
  java -jar "$jar" $c --help
  printf '```\n'
done >> README.md.new
mv README.md.new README.md
