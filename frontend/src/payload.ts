// The binary container the Python side writes (explorer/mapview.py, ``pack``):
//
//   "ATLM"  u32 version  u32 header_bytes  header (UTF-8 JSON)  zero padding to 8 bytes  arrays
//
// The header names each array with its type, byte offset (from the end of the padding) and
// length. Little-endian throughout. One container carries the points of a corpus (x, y, topic,
// flags), another a filter mask or a set of marked rows, so that each travels once and is
// cached apart from the small JSON state that changes on every interaction.

export type Typed = Float32Array | Uint32Array | Uint16Array | Uint8Array;

export interface ArraySpec {
  name: string;
  dtype: "f32" | "u32" | "u16" | "u8";
  offset: number;
  length: number;
}

export interface Blob {
  header: Record<string, any> & { id: string; kind: string; arrays: ArraySpec[] };
  arrays: Record<string, Typed>;
  bytes: number;
}

const MAGIC = 0x4d4c5441; // "ATLM" read as a little-endian u32
const CTORS = { f32: Float32Array, u32: Uint32Array, u16: Uint16Array, u8: Uint8Array } as const;

/** The id in a container's header, without decoding its arrays (to skip a blob already known). */
export function peekId(bytes: Uint8Array): string | null {
  if (bytes.byteLength < 12) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0, true) !== MAGIC) return null;
  const n = view.getUint32(8, true);
  const head = new TextDecoder().decode(bytes.subarray(12, 12 + Math.min(n, 4096)));
  const m = /"id"\s*:\s*"([^"]*)"/.exec(head);
  return m ? m[1] : null;
}

export function decode(bytes: Uint8Array): Blob {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.byteLength < 12 || view.getUint32(0, true) !== MAGIC) throw new Error("not an atlas map container");
  const version = view.getUint32(4, true);
  if (version !== 1) throw new Error(`atlas map container version ${version} is not supported`);
  const n = view.getUint32(8, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(12, 12 + n)));
  const start = Math.ceil((12 + n) / 8) * 8;
  // Typed arrays need aligned offsets: copy the data section into a buffer of its own (the
  // bytes arrive as a view into a larger message at any offset).
  const data = bytes.slice(start);
  const arrays: Record<string, Typed> = {};
  for (const spec of header.arrays as ArraySpec[]) {
    const Ctor = CTORS[spec.dtype];
    if (!Ctor) throw new Error(`unknown array type ${spec.dtype}`);
    if (spec.offset % Ctor.BYTES_PER_ELEMENT !== 0) throw new Error(`misaligned array ${spec.name}`);
    if (spec.offset + spec.length * Ctor.BYTES_PER_ELEMENT > data.byteLength) throw new Error(`truncated array ${spec.name}`);
    arrays[spec.name] = new Ctor(data.buffer, data.byteOffset + spec.offset, spec.length);
  }
  return { header, arrays, bytes: bytes.byteLength };
}

/** Base64 (standard alphabet) to bytes. */
export function fromBase64(text: string): Uint8Array {
  const bin = atob(text.replace(/\s+/g, ""));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Bytes to base64, in chunks (String.fromCharCode has an argument limit). */
export function toBase64(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, Array.from(bytes.subarray(i, i + 0x8000)));
  return btoa(s);
}
