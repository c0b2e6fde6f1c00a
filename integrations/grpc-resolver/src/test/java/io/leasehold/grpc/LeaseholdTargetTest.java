package io.leasehold.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.NameResolverRegistry;
import io.leasehold.client.LeaseholdClient;
import java.net.URI;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Which targets a channel accepts, where their cluster comes from, and what a bad one is told. */
class LeaseholdTargetTest {
  @Test
  void theServiceLoaderRegistersTheProviderForTheLeaseholdScheme() {
    assertTrue(
        NameResolverRegistry.getDefaultRegistry().getProviderForScheme("leasehold")
            instanceof LeaseholdNameResolverProvider);
  }

  @Test
  void targetsWithoutASchemeStayDnsTargetsEvenWithAProviderBuiltWithAClient() {
    try (LeaseholdClient client = LeaseholdClient.connect("127.0.0.1:1")) {
      LeaseholdNameResolverProvider provider = new LeaseholdNameResolverProvider(client);
      NameResolverRegistry.getDefaultRegistry().register(provider);
      try {
        assertEquals("dns", NameResolverRegistry.getDefaultRegistry().getDefaultScheme());
        assertTrue(
            NameResolverRegistry.getDefaultRegistry().getProviderForScheme("leasehold") == provider,
            "it takes the scheme over");
      } finally {
        NameResolverRegistry.getDefaultRegistry().deregister(provider);
      }
    }
  }

  @Test
  void aTargetNamesTheServiceAndOptionallyTheEndpoints() {
    LeaseholdTarget bare = LeaseholdTarget.parse(URI.create("leasehold:///payments"));
    assertEquals(new LeaseholdTarget("payments", "payments", Optional.empty()), bare);
    assertEquals("service/payments/", bare.prefix());
    LeaseholdTarget named =
        LeaseholdTarget.parse(
            URI.create("leasehold://10.0.0.1:7400,node-2.example:7400/pay%20ments"));
    assertEquals(
        new LeaseholdTarget(
            "pay ments",
            "pay%20ments",
            Optional.of(List.of("10.0.0.1:7400", "node-2.example:7400"))),
        named);
    // A URI's authority holds brackets only as one host: a list with IPv6 goes in the property
    // instead.
    assertEquals(
        Optional.of(List.of("[::1]:7401")),
        LeaseholdTarget.parse(URI.create("leasehold://[::1]:7401/payments")).endpoints());
    assertEquals(
        List.of("[::1]:7401", "10.0.0.1:7400"),
        Endpoints.parse("leasehold.endpoints", "[::1]:7401,10.0.0.1:7400"));
  }

  @Test
  void aTargetsQueryNamesZonesInOrderAndMetadata() {
    LeaseholdTarget t =
        LeaseholdTarget.parse(
            URI.create(
                "leasehold:///payments?zone=eu-west-1a,eu-west-1b,*&meta.version=2.3&meta.canary=true"));
    assertEquals(List.of("eu-west-1a", "eu-west-1b", "*"), t.zones());
    assertEquals(Map.of("version", "2.3", "canary", "true"), t.metadata());
    assertEquals("payments", t.service());
    assertEquals("payments", t.authority(), "the query is not part of the authority");
    assertEquals(
        Map.of("team", "a b"),
        LeaseholdTarget.parse(URI.create("leasehold:///payments?meta.team=a%20b")).metadata());
    assertEquals(List.of(), LeaseholdTarget.parse(URI.create("leasehold:///payments")).zones());
  }

  @Test
  void badTargetsAreRefusedWhenTheChannelIsBuiltNamingThePartAndItsRule() {
    Map<String, String> refusals =
        new HashMap<>(
            Map.of(
                "leasehold:///", "service: must not be empty",
                "leasehold://127.0.0.1:7400", "service: must not be empty",
                "leasehold:///payments/eu", "service: must not contain '/' (found at 8",
                "leasehold:///payments/", "service: must not contain '/' (found at 8",
                "leasehold:payments",
                    "target: must be leasehold:///<service> or leasehold://<host:port>",
                "leasehold://127.0.0.1/payments",
                    "authority: each endpoint must be host:port with a port from 1 to 65535, separated by ','; entry 1 \"127.0.0.1\" has no port",
                "leasehold://127.0.0.1:7400,/payments",
                    "authority: each endpoint must be host:port with a port from 1 to 65535, separated by ','; entry 2 \"\" is empty",
                "leasehold://127.0.0.1:http/payments",
                    "entry 1 \"127.0.0.1:http\" has a port that is not a number",
                "leasehold://127.0.0.1:70000/payments",
                    "entry 1 \"127.0.0.1:70000\" has port 70000, out of range"));
    refusals.put("leasehold:///payments?region=eu", "query: unknown parameter \"region\"");
    refusals.put("leasehold:///payments?zone=eu&zone=us", "query: zone is given twice");
    refusals.put("leasehold:///payments?zone=eu,,us", "zone: each zone must be non-empty");
    refusals.put("leasehold:///payments?zone=eu,eu", "zone: \"eu\" is given twice");
    refusals.put("leasehold:///payments?meta.v=1&meta.v=2", "query: meta.v is given twice");
    refusals.forEach(
        (target, message) -> {
          IllegalArgumentException e =
              assertThrows(
                  IllegalArgumentException.class,
                  () ->
                      ManagedChannelBuilder.forTarget(target).usePlaintext().build().shutdownNow(),
                  target);
          assertTrue(
              e.getMessage().startsWith(message) || e.getMessage().contains(message),
              target + " -> " + e.getMessage());
          assertTrue(
              e.getMessage().contains(target), "the message names the target: " + e.getMessage());
        });
  }

  @Test
  void aTargetWithoutEndpointsTakesThemFromThePropertyThenTheEnvironmentElseIsRefused() {
    Map<String, String> settings = new HashMap<>();
    LeaseholdNameResolverProvider provider =
        new LeaseholdNameResolverProvider(
            Optional.empty(),
            settings::get,
            endpoints -> {
              throw new AssertionError("no client is made before the resolver starts");
            },
            LeaseholdNameResolverProvider.FIRST_LISTING_TIMEOUT);
    URI target = URI.create("leasehold:///payments");

    IllegalArgumentException none =
        assertThrows(
            IllegalArgumentException.class,
            () -> provider.newNameResolver(target, Resolvers.args()));
    assertTrue(
        none.getMessage()
            .startsWith("authority: no cluster endpoints for target leasehold:///payments"),
        none.getMessage());
    assertTrue(
        none.getMessage().contains("leasehold.endpoints")
            && none.getMessage().contains("LEASEHOLD_ENDPOINTS"),
        none.getMessage());

    settings.put(LeaseholdNameResolverProvider.ENDPOINTS_ENV, "10.0.0.1:7400, 10.0.0.2:7400");
    assertEquals(
        "payments", provider.newNameResolver(target, Resolvers.args()).getServiceAuthority());
    settings.put(LeaseholdNameResolverProvider.ENDPOINTS_PROPERTY, "10.0.0.1");
    IllegalArgumentException bad =
        assertThrows(
            IllegalArgumentException.class,
            () -> provider.newNameResolver(target, Resolvers.args()));
    assertTrue(
        bad.getMessage().startsWith("leasehold.endpoints: each endpoint must be host:port"),
        "the property comes first: " + bad.getMessage());
    assertEquals(0, provider.openClients());
  }

  @Test
  void anotherSchemeIsNotThisProvidersToResolve() {
    assertNull(
        new LeaseholdNameResolverProvider()
            .newNameResolver(URI.create("dns:///payments"), Resolvers.args()));
  }

  @Test
  void theChannelsAuthorityIsTheService() throws InterruptedException {
    ManagedChannel channel =
        ManagedChannelBuilder.forTarget("leasehold://127.0.0.1:1/payments").usePlaintext().build();
    try {
      assertEquals("payments", channel.authority());
    } finally {
      channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }
  }
}
