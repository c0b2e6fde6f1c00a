package io.leasehold.client.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.client.LeaseholdClient;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The SDK's public API shows no protobuf type: wire types stay in {@code
 * io.leasehold.client.internal}.
 */
class PublicApiTest {
  private static final String SDK = "io.leasehold.client";

  @Test
  void noPublicOrProtectedMemberOutsideInternalMentionsAWireType() throws Exception {
    Path classes =
        Path.of(LeaseholdClient.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    List<String> names = WireTypeLeaks.classNames(classes, SDK, SDK + ".internal");
    assertTrue(
        names.contains(LeaseholdClient.class.getName()),
        "the walk found the SDK's classes in " + classes);
    List<String> leaks = new ArrayList<>();
    for (String name : names) {
      leaks.addAll(WireTypeLeaks.leaks(Class.forName(name, false, getClass().getClassLoader())));
    }
    assertEquals(List.of(), leaks, "public API members that mention wire types");
  }

  @Test
  void theCheckFlagsEveryKindOfLeakInADeliberatelyBadClass() throws URISyntaxException {
    List<String> leaks = new ArrayList<>(WireTypeLeaks.leaks(LeakyApi.class));
    leaks.addAll(WireTypeLeaks.leaks(LeakyApi.Component.class));
    String all = String.join("\n", leaks);
    for (String member :
        List.of(
            " extends",
            "(constructor) takes",
            "event returns",
            "events returns",
            "wildcard takes",
            "bounded type parameter",
            "array returns",
            "field ",
            "component duration",
            "implements")) {
      assertTrue(all.contains(member), "flags " + member + " in:\n" + all);
    }
    assertFalse(all.contains("hidden"), "private and package-private members are not API:\n" + all);
  }

  @Test
  void theWalkOfTheTestClassesFindsTheBadClass() throws URISyntaxException {
    Path classes =
        Path.of(LeakyApi.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    List<String> names =
        WireTypeLeaks.classNames(
            classes, "io.leasehold.client.api", "io.leasehold.client.api.none");
    assertTrue(names.contains(LeakyApi.class.getName()), names.toString());
    assertTrue(names.stream().anyMatch(n -> n.contains("LeakyApi$Component")), names.toString());
  }
}
