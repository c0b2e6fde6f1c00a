package io.leasehold.server.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.Attributes;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.WatchRequest;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The live path filters the unpacked fields of a WireEvent; it must agree with the event itself.
 */
class WatchFilterTest {
  @Test
  void wireEventsAndEventsAreFilteredAlike() {
    List<Event> events = new ArrayList<>();
    for (Event.Type type :
        List.of(Event.Type.ACQUIRED, Event.Type.UPDATED, Event.Type.RENEWED, Event.Type.EXPIRED)) {
      for (String name : List.of("svc/a", "svc-b", "routes/x", "")) {
        for (String address : List.of("", "10.0.0.1:80")) {
          events.add(
              Event.newBuilder()
                  .setType(type)
                  .setName(name)
                  .setRevision(3)
                  .setLease(
                      Lease.newBuilder()
                          .setName(name)
                          .setAttributes(Attributes.newBuilder().setAddress(address)))
                  .build());
        }
      }
    }
    List<WatchRequest> requests =
        List.of(
            WatchRequest.getDefaultInstance(),
            WatchRequest.newBuilder().setPrefix("svc/").build(),
            WatchRequest.newBuilder().setPrefix("routes/").setRoutesOnly(true).build(),
            WatchRequest.newBuilder().addTypes(Event.Type.EXPIRED).build(),
            WatchRequest.newBuilder().setIncludeRenewals(true).setPrefix("svc").build());
    int matched = 0;
    for (WatchRequest r : requests) {
      WatchFilter f = WatchFilter.of(r);
      for (Event e : events) {
        boolean expected = f.matches(e);
        assertEquals(expected, f.matches(WireEvent.of(e)), r + " / " + e);
        matched += expected ? 1 : 0;
      }
    }
    assertTrue(
        matched > 0 && matched < requests.size() * events.size(),
        "the cases tell matching from not: " + matched);
    assertFalse(
        WatchFilter.of(requests.get(2)).matches(WireEvent.of(events.get(4))),
        "a route filter drops a lease without an address");
  }
}
