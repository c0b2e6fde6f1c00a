package io.leasehold.server.fuzz;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.List;

/**
 * Byte-level changes to a serialized request: what a broken or hostile client sends. Some leave a
 * message that parses (unknown fields, a field repeated, two messages concatenated), most do not
 * (cut in a varint, a length past the end, a wrong wire type, invalid UTF-8 in a string field,
 * groups nested past the parser's limit).
 */
final class WireMutations {
  private WireMutations() {}

  static byte[] mutate(byte[] bytes, Descriptor type, Values v) {
    byte[] b = bytes;
    int n = 1 + v.below(3);
    for (int i = 0; i < n; i++) {
      b = mutateOnce(b, type, v);
    }
    return b;
  }

  private static byte[] mutateOnce(byte[] b, Descriptor type, Values v) {
    switch (v.below(14)) {
      case 0: // cut
        return b.length == 0 ? b : Arrays.copyOf(b, v.below(b.length));
      case 1: // random bytes after the end
        return concat(b, RandomMessages.bytes(v, 1 + v.below(16)));
      case 2:
        { // one bit flipped
          if (b.length == 0) {
            return b;
          }
          byte[] c = b.clone();
          int at = v.below(c.length);
          c[at] ^= (byte) (1 << v.below(8));
          return c;
        }
      case 3:
        { // one byte replaced
          if (b.length == 0) {
            return b;
          }
          byte[] c = b.clone();
          c[v.below(c.length)] = (byte) v.below(256);
          return c;
        }
      case 4:
        { // random bytes in the middle
          int at = b.length == 0 ? 0 : v.below(b.length);
          return concat(
              concat(Arrays.copyOf(b, at), RandomMessages.bytes(v, 1 + v.below(8))),
              Arrays.copyOfRange(b, at, b.length));
        }
      case 5: // an unknown field of any wire type
        return concat(
            b,
            write(
                out -> {
                  int number = v.pickOf(100, 1000, 536_870_911, 19_000, 2 + v.below(30));
                  switch (v.below(4)) {
                    case 0 -> out.writeUInt64(number, v.number());
                    case 1 -> out.writeString(number, v.string());
                    case 2 -> out.writeFixed32(number, (int) v.number());
                    default -> out.writeFixed64(number, v.number());
                  }
                }));
      case 6: // a known field with the wrong wire type
        if (type.getFields().isEmpty()) {
          return concat(b, new byte[] {0x0a, 0x01});
        }
        return concat(
            b,
            write(
                out -> {
                  FieldDescriptor f = v.pick(type.getFields());
                  if (f.getJavaType() == FieldDescriptor.JavaType.STRING
                      || f.getJavaType() == FieldDescriptor.JavaType.MESSAGE) {
                    out.writeUInt64(f.getNumber(), v.number());
                  } else {
                    out.writeString(f.getNumber(), v.string());
                  }
                }));
      case 7:
        { // a string field that is not UTF-8
          List<FieldDescriptor> strings =
              type.getFields().stream()
                  .filter(f -> f.getType() == FieldDescriptor.Type.STRING)
                  .toList();
          if (strings.isEmpty()) {
            return concat(b, new byte[] {(byte) 0xff});
          }
          FieldDescriptor f = v.pick(strings);
          byte[] bad =
              v.pickOf(
                  new byte[] {(byte) 0xc3, 0x28},
                  new byte[] {(byte) 0xff},
                  new byte[] {(byte) 0xc0, (byte) 0x80},
                  new byte[] {(byte) 0xed, (byte) 0xa0, (byte) 0x80},
                  new byte[] {'l', 'o', 'c', 'k', '/', (byte) 0xe2, (byte) 0x82},
                  new byte[] {(byte) 0xf4, (byte) 0x90, (byte) 0x80, (byte) 0x80});
          return concat(b, write(out -> out.writeByteArray(f.getNumber(), bad)));
        }
      case 8: // a length-delimited field whose length runs past the end, or is absurd
        return concat(
            b,
            write(
                out -> {
                  out.writeTag(1 + v.below(8), 2);
                  out.writeUInt32NoTag(v.pickOf(5, 1 << 20, Integer.MAX_VALUE, -1));
                  out.writeRawBytes(new byte[] {1, 2});
                }));
      case 9:
        { // a varint of eleven bytes
          byte[] varint = new byte[11];
          Arrays.fill(varint, (byte) 0x80);
          return concat(concat(b, new byte[] {0x10}), varint);
        }
      case 10: // field number 0, or an end-group with no start
        return concat(b, v.chance(0.5) ? new byte[] {0x00, 0x01} : new byte[] {0x0c});
      case 11:
        { // groups nested past the parser's recursion limit
          int depth = v.pickOf(50, 101, 2_000);
          return concat(
              b,
              write(
                  out -> {
                    for (int i = 0; i < depth; i++) {
                      out.writeTag(999, 3);
                    }
                    for (int i = 0; i < depth; i++) {
                      out.writeTag(999, 4);
                    }
                  }));
        }
      case 12: // the message twice: it parses, as a merge
        return concat(b, b);
      default: // a huge field: past the server's 4 MiB inbound limit, now and then
        return concat(
            b,
            write(out -> out.writeByteArray(50_000, new byte[v.chance(0.2) ? 5 << 20 : 100_000])));
    }
  }

  private interface Writer {
    void write(CodedOutputStream out) throws IOException;
  }

  private static byte[] write(Writer w) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    CodedOutputStream out = CodedOutputStream.newInstance(bytes);
    try {
      w.write(out);
      out.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  static byte[] concat(byte[] a, byte[] b) {
    byte[] c = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, c, a.length, b.length);
    return c;
  }
}
