package io.leasehold.server.fuzz;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.EnumDescriptor;
import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import java.util.ArrayList;
import java.util.List;

/**
 * Requests of any type, made from its descriptor: every field random ({@link #scratch}), or a given
 * request with a few fields changed ({@link #mutate}). Strings and numbers come from the call's
 * {@link Values}; enum fields get unknown numbers too, repeated and map fields empty or overfull
 * lists.
 */
final class RandomMessages {
  private RandomMessages() {}

  private static final int MAX_DEPTH = 4;

  static Message scratch(Message prototype, Values v) {
    return scratch(prototype.newBuilderForType(), v, 0);
  }

  private static Message scratch(Message.Builder b, Values v, int depth) {
    for (FieldDescriptor f : b.getDescriptorForType().getFields()) {
      if (!v.chance(0.6)) {
        continue;
      }
      if (f.isMapField() || f.isRepeated()) {
        int n = v.chance(0.05) ? 65 + v.below(10_000) : v.below(4);
        for (int i = 0; i < n; i++) {
          Object e = element(b, f, v, depth, i);
          if (e != null) {
            b.addRepeatedField(f, e);
          }
        }
      } else {
        Object value = element(b, f, v, depth, 0);
        if (value != null) {
          b.setField(f, value);
        }
      }
    }
    return b.build();
  }

  /** A random value for one field (one element of a repeated field). */
  private static Object element(
      Message.Builder parent, FieldDescriptor f, Values v, int depth, int index) {
    return switch (f.getJavaType()) {
      case STRING -> v.string();
      case LONG -> v.number();
      case INT -> (int) v.number();
      case BOOLEAN -> v.chance(0.5);
      case DOUBLE -> (double) v.number();
      case FLOAT -> (float) v.number();
      case BYTE_STRING -> ByteString.copyFrom(bytes(v, v.below(32)));
      case ENUM -> enumValue(f.getEnumType(), v);
      case MESSAGE -> {
        if (depth >= MAX_DEPTH) {
          yield null;
        }
        Message.Builder sub = parent.newBuilderForField(f);
        // Large repeated messages (10,000 renew items, say) are kept small inside: the count is
        // what matters.
        yield index > 8 ? scratchSmall(sub, v) : scratch(sub, v, depth + 1);
      }
    };
  }

  private static Message scratchSmall(Message.Builder b, Values v) {
    for (FieldDescriptor f : b.getDescriptorForType().getFields()) {
      if (!f.isRepeated() && f.getJavaType() == FieldDescriptor.JavaType.STRING) {
        b.setField(f, "lock/a");
      } else if (!f.isRepeated() && f.getJavaType() == FieldDescriptor.JavaType.LONG) {
        b.setField(f, 1 + (long) v.below(1000));
      }
    }
    return b.build();
  }

  /**
   * A known value, or a number no value has (proto3 enums are open: the server sees the number).
   */
  static EnumValueDescriptor enumValue(EnumDescriptor type, Values v) {
    if (v.chance(0.6)) {
      return v.pick(type.getValues());
    }
    int number =
        v.chance(0.5)
            ? (int) v.number()
            : v.pickOf(-1, 99, Integer.MAX_VALUE, Integer.MIN_VALUE, type.getValues().size());
    return type.findValueByNumberCreatingIfUnknown(number);
  }

  /**
   * The request with one to three fields (at any depth) cleared, set to random values, cut or
   * overfilled.
   */
  static Message mutate(Message request, Values v) {
    Message.Builder b = request.toBuilder();
    int n = 1 + v.below(3);
    for (int i = 0; i < n; i++) {
      mutateOne(b, v, 0);
    }
    return b.build();
  }

  private static void mutateOne(Message.Builder b, Values v, int depth) {
    List<FieldDescriptor> fields = b.getDescriptorForType().getFields();
    if (fields.isEmpty()) {
      return; // StatusRequest, say: its wire form is where it can be broken
    }
    FieldDescriptor f = v.pick(fields);
    // Go deeper into a set message field half the time.
    if (!f.isRepeated()
        && f.getJavaType() == FieldDescriptor.JavaType.MESSAGE
        && b.hasField(f)
        && depth < MAX_DEPTH
        && v.chance(0.5)) {
      Message.Builder sub = ((Message) b.getField(f)).toBuilder();
      mutateOne(sub, v, depth + 1);
      b.setField(f, sub.build());
      return;
    }
    if (f.isRepeated()) {
      int count = b.getRepeatedFieldCount(f);
      switch (v.below(4)) {
        case 0 -> b.clearField(f);
        case 1 -> {
          Object e = element(b, f, v, depth, 0);
          if (e != null) {
            b.addRepeatedField(f, e);
          }
        }
        case 2 -> {
          if (count > 0) {
            // Duplicates: the same renew item twice, the same metadata key twice (the last wins).
            b.addRepeatedField(f, b.getRepeatedField(f, v.below(count)));
          }
        }
        default -> {
          if (count > 0) {
            List<Object> kept = new ArrayList<>();
            for (int j = 0; j < count; j++) {
              kept.add(b.getRepeatedField(f, j));
            }
            kept.remove(v.below(count));
            b.clearField(f);
            kept.forEach(e -> b.addRepeatedField(f, e));
          }
        }
      }
      return;
    }
    if (v.chance(0.2)) {
      b.clearField(f);
      return;
    }
    Object current = b.getField(f);
    Object next =
        switch (f.getJavaType()) {
          case STRING -> mutateString((String) current, v);
          case LONG -> mutateLong((Long) current, v);
          case INT -> (int) mutateLong((long) (Integer) current, v);
          case BOOLEAN -> !(Boolean) current;
          case ENUM -> enumValue(f.getEnumType(), v);
          default -> element(b, f, v, depth, 0);
        };
    if (next != null) {
      b.setField(f, next);
    }
  }

  private static String mutateString(String s, Values v) {
    return switch (v.below(6)) {
      case 0 -> v.string();
      case 1 -> s.isEmpty() ? s : s.substring(0, v.below(s.length()));
      case 2 -> s + v.pickOf("\u0000", "\uD800", "/", " ", "\n", "é", "\uD83D\uDD25", "\u202E");
      case 3 -> s.repeat(1 + v.below(200));
      case 4 -> v.pickOf("", " ", s.toUpperCase(java.util.Locale.ROOT), "/" + s, s + "/");
      default -> s.isEmpty() ? v.string() : s.substring(0, v.below(s.length())) + v.string();
    };
  }

  private static long mutateLong(long x, Values v) {
    return switch (v.below(6)) {
      case 0 -> v.number();
      case 1 -> -x;
      case 2 -> x + 1;
      case 3 -> x - 1;
      case 4 -> x ^ (1L << v.below(64));
      default -> v.pick(Atoms.BOUNDARIES);
    };
  }

  static byte[] bytes(Values v, int n) {
    byte[] b = new byte[n];
    v.random.nextBytes(b);
    return b;
  }
}
