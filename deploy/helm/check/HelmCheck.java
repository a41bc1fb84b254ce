import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Lints the chart and renders it once per value set with the real Helm engine (helm-java: Helm's
 * Go library through JNA), in one JVM. Helm also validates every value set against the chart's
 * values.schema.json while rendering.
 *
 * <pre>java -cp CLASSPATH HelmCheck.java CHART_DIR OUT_DIR KUBE_VERSION VALUES.yaml...</pre>
 *
 * Writes OUT_DIR/NAME.yaml for each VALUES file NAME.yaml ("defaults.yaml" may be empty: the
 * chart's own defaults). Prints lint messages; exits 1 when lint fails or any set fails to render,
 * after trying them all.
 *
 * <p>helm-java's template returns the release manifest without hooks (the helm CLI prints both),
 * so the pre-install/pre-upgrade migrations Job would go unchecked. Rendering therefore uses a
 * copy of the chart in which the annotation key {@code helm.sh/hook} (and -weight,
 * -delete-policy) reads {@value #HOOK_KEY_SEEN}: the Job is then part of the manifest, validated
 * like every other object, and its hook annotations stay visible to the test under that key. Lint
 * runs on the chart itself.
 */
public class HelmCheck {
  static final String HOOK_KEY_SEEN = "helm-check.payments/hook";

  /** The chart, copied with every template's hook annotations renamed (see the class comment). */
  static Path withHooksAsManifests(Path chart) throws Exception {
    Path copy = Files.createTempDirectory("helm-check-chart-").resolve(chart.getFileName());
    try (Stream<Path> files = Files.walk(chart)) {
      for (Path source : (Iterable<Path>) files::iterator) {
        Path target = copy.resolve(chart.relativize(source).toString());
        if (Files.isDirectory(source)) {
          Files.createDirectories(target);
        } else if (source.getParent().getFileName().toString().equals("templates")) {
          Files.writeString(target, Files.readString(source).replace("helm.sh/hook", HOOK_KEY_SEEN));
        } else {
          Files.copy(source, target);
        }
      }
    }
    return copy;
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 4) {
      System.err.println("usage: HelmCheck CHART_DIR OUT_DIR KUBE_VERSION VALUES.yaml...");
      System.exit(2);
    }
    Path chart = Path.of(args[0]).toAbsolutePath();
    Path out = Path.of(args[1]).toAbsolutePath();
    String kubeVersion = args[2];
    Files.createDirectories(out);
    List<String> failures = new ArrayList<>();

    LintResult lint = new Helm(chart).lint().strict().call();
    for (String message : lint.getMessages()) System.out.println("[helm lint] " + message);
    if (lint.isFailed()) failures.add("lint");
    else System.out.println("[helm lint] ok (strict)");

    Path renderable = withHooksAsManifests(chart);
    for (int i = 3; i < args.length; i++) {
      Path values = Path.of(args[i]).toAbsolutePath();
      String name = values.getFileName().toString().replaceFirst("\\.ya?ml$", "");
      try {
        String manifests =
            new Helm(renderable)
                .template()
                .withName("payments")
                .withNamespace("payments")
                .withKubeVersion(kubeVersion)
                .withValuesFile(values)
                .call();
        Files.writeString(out.resolve(name + ".yaml"), manifests);
        System.out.println("[helm template] " + name + ": ok");
      } catch (Exception e) {
        failures.add(name);
        System.out.println("[helm template] " + name + ": FAILED: " + e.getMessage());
      }
    }
    try (Stream<Path> files = Files.walk(renderable.getParent())) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
    if (!failures.isEmpty()) {
      System.out.println("[helm] failed: " + String.join(", ", failures));
      System.exit(1);
    }
  }
}
