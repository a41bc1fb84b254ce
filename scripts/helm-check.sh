#!/usr/bin/env bash
# Lints deploy/helm/payments and renders it with every value set in deploy/helm/check/values/ using
# the real Helm engine (helm-java, resolved from Maven Central on first use, ≈ 45 MB with its
# native library; cached in ~/.m2), at a pinned Kubernetes version. Helm validates each set
# against the chart's values.schema.json. The rendered manifests land in OUT_DIR/<set>.yaml;
# test/helm-chart.int-spec.ts validates them against the Kubernetes API schemas.
#
#   bash scripts/helm-check.sh [OUT_DIR] [VALUES.yaml...]   (default: .run/helm, every set)
#   HELM_KUBE_VERSION=1.34.0 (the schemas' version: kubernetes-models 5.1 = Kubernetes 1.34)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CHECK="$ROOT/deploy/helm/check"
OUT="${1:-$ROOT/.run/helm}"
shift || true
KUBE_VERSION="${HELM_KUBE_VERSION:-1.34.0}"
CACHE="$CHECK/.cache"
CLASSPATH_FILE="$CACHE/classpath.txt"

say() { printf '[helm-check] %s\n' "$*"; }
die() {
  printf '[helm-check] ERROR: %s\n' "$*" >&2
  exit 1
}

command -v java >/dev/null || die "java (17+) is required"
command -v mvn >/dev/null || die "Maven is required (helm-java is resolved from Maven Central)"

# The classpath is resolved once per pom.xml; a stale or missing jar re-resolves it.
stale=1
if [[ -s "$CLASSPATH_FILE" && "$CLASSPATH_FILE" -nt "$CHECK/pom.xml" ]]; then
  stale=0
  IFS=: read -r -a jars <"$CLASSPATH_FILE" || true
  for jar in "${jars[@]}"; do [[ -f "$jar" ]] || stale=1; done
fi
if ((stale)); then
  say "resolving helm-java with Maven (first run downloads ≈ 45 MB)"
  mkdir -p "$CACHE"
  mvn -q -B -f "$CHECK/pom.xml" dependency:build-classpath -Dmdep.outputFile="$CLASSPATH_FILE" ||
    die "Maven could not resolve com.marcnuri.helm-java:helm-java (see $CHECK/pom.xml)"
fi

if (($# == 0)); then set -- "$CHECK"/values/*.yaml; fi
mkdir -p "$OUT"
say "Kubernetes $KUBE_VERSION, value sets: $(for f in "$@"; do basename "$f" .yaml; done | tr '\n' ' ')"
exec java -cp "$(cat "$CLASSPATH_FILE")" "$CHECK/HelmCheck.java" \
  "$ROOT/deploy/helm/payments" "$OUT" "$KUBE_VERSION" "$@"
