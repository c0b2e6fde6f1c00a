package io.leasehold.testkit;

import io.leasehold.client.LeaseholdClient;
import io.leasehold.server.NodeConfig;
import java.io.IOException;
import java.util.function.BiFunction;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A JUnit 5 extension that runs a {@link LeaseholdCluster} for a test class:
 *
 * <pre>{@code
 * class CheckoutTest {
 *   @RegisterExtension
 *   static final LeaseholdExtension leasehold = LeaseholdExtension.cluster(3);
 *
 *   @Test
 *   void onlyOneWorkerRunsTheJob(LeaseholdClient client) { ... }
 *
 *   @Test
 *   void theJobMovesWhenTheLeaderDies(LeaseholdCluster cluster) { cluster.kill(cluster.leader()); ... }
 * }
 * }</pre>
 *
 * <p>In a {@code static} field the cluster starts before the class's first test and stops after its
 * last; before each test, nodes that an earlier test killed are started again and isolated ones
 * healed ({@link LeaseholdCluster#restore}), so every test begins with the whole cluster (leases
 * and other state carry over: use names of the test's own). In an instance field each test gets a
 * fresh cluster. Test and lifecycle methods may take a {@link LeaseholdCluster} or a {@link
 * LeaseholdClient} (the cluster's shared client) as a parameter.
 */
public final class LeaseholdExtension
    implements BeforeAllCallback,
        AfterAllCallback,
        BeforeEachCallback,
        AfterEachCallback,
        ParameterResolver {
  /** Where each extension marks the context it runs a cluster for; the innermost one answers. */
  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(LeaseholdExtension.class);

  private static final String ACTIVE = "active";

  private final LeaseholdCluster.Builder builder;
  private LeaseholdCluster cluster;
  private boolean perTest;

  /** The class whose beforeAll started the cluster (not a nested class's). */
  private String startedBy;

  private LeaseholdExtension(int nodes) {
    this.builder = LeaseholdCluster.builder().nodes(nodes);
  }

  /**
   * One node, as {@code leasehold server --standalone} runs it.
   *
   * @return the extension, to register with {@code @RegisterExtension}
   */
  public static LeaseholdExtension standalone() {
    return new LeaseholdExtension(1);
  }

  /**
   * A cluster of {@code nodes} nodes (3 tolerates the loss of one).
   *
   * @param nodes 1 to 9
   * @return the extension, to register with {@code @RegisterExtension}
   */
  public static LeaseholdExtension cluster(int nodes) {
    return new LeaseholdExtension(nodes);
  }

  /**
   * Settings for every node ({@link LeaseholdCluster.Builder#configure(UnaryOperator)}).
   *
   * @param configure changes a node's configuration
   * @return this extension
   */
  public LeaseholdExtension configure(UnaryOperator<NodeConfig.Builder> configure) {
    builder.configure(configure);
    return this;
  }

  /**
   * Settings per node id ({@link LeaseholdCluster.Builder#configure(BiFunction)}).
   *
   * @param configure changes the configuration of the node with the given id
   * @return this extension
   */
  public LeaseholdExtension configure(
      BiFunction<String, NodeConfig.Builder, NodeConfig.Builder> configure) {
    builder.configure(configure);
    return this;
  }

  /**
   * The running cluster.
   *
   * @return the cluster
   * @throws IllegalStateException outside the tests it runs for
   */
  public LeaseholdCluster cluster() {
    if (cluster == null) {
      throw new IllegalStateException("the cluster runs only while the tests it is for run");
    }
    return cluster;
  }

  /**
   * The cluster's shared client ({@link LeaseholdCluster#client()}).
   *
   * @return the client
   */
  public LeaseholdClient client() {
    return cluster().client();
  }

  /**
   * Every node's client address ({@link LeaseholdCluster#endpoints()}).
   *
   * @return the endpoints, comma-separated
   */
  public String endpoints() {
    return cluster().endpoints();
  }

  @Override
  public void beforeAll(ExtensionContext context) throws IOException {
    if (cluster == null) {
      cluster = builder.start();
      perTest = false;
      startedBy = context.getUniqueId();
      context.getStore(NAMESPACE).put(ACTIVE, this);
    }
  }

  @Override
  public void beforeEach(ExtensionContext context) throws IOException {
    if (cluster == null) {
      cluster = builder.start();
      perTest = true;
      context.getStore(NAMESPACE).put(ACTIVE, this);
    } else if (!perTest) {
      cluster.restore();
    }
  }

  @Override
  public void afterEach(ExtensionContext context) {
    if (perTest) {
      stop();
    }
  }

  @Override
  public void afterAll(ExtensionContext context) {
    if (context.getUniqueId().equals(startedBy)) {
      stop();
    }
  }

  private void stop() {
    if (cluster != null) {
      try {
        cluster.close();
      } finally {
        cluster = null;
      }
    }
  }

  /**
   * With extensions in an outer class and a nested one, the parameters are the innermost one's (the
   * store's lookup goes from the test's context outwards).
   */
  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    Class<?> type = parameter.getParameter().getType();
    return (type == LeaseholdCluster.class || type == LeaseholdClient.class)
        && context.getStore(NAMESPACE).get(ACTIVE) == this;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    if (cluster == null) {
      throw new ParameterResolutionException("no Leasehold cluster runs for this test");
    }
    return parameter.getParameter().getType() == LeaseholdCluster.class
        ? cluster
        : cluster.client();
  }
}
