// NVS partition images in the browser, byte for byte what Espressif's esp-idf-nvs-partition-gen 0.3.0 writes for
// string entries (format version 2): the same page, entry and CRC layout and the same page-filling rules, so the
// image `xzbuild provision` writes and the one this page writes are identical (tests/release/test_nvsgen_node.py).
//
// Page (4096 bytes): header {u32 state, u32 sequence, u8 version 0xFE, 19 × 0xFF, u32 CRC32 of bytes 4..27},
// a 32-byte entry bitmap (2 bits per entry, 11 = empty, 10 = written), 126 entries of 32 bytes. A namespace is a
// U8 entry in namespace 0 whose value is its index; a string is an SZ entry {ns, 0x21, span, 0xFF, CRC32,
// key[16], u16 size incl. NUL, 0xFFFF, u32 CRC32 of the bytes} followed by the bytes in span - 1 entries. A value
// that would reach the page's last entry goes to a new page (the old one is then marked FULL); unused pages stay
// erased, and the last page is kept free for NVS's page rotation.

export const PAGE_SIZE = 4096;
const ENTRIES = 126;
const FIRST_ENTRY = 64;
const ACTIVE = 0xfffffffe;
const FULL = 0xfffffffc;
const VERSION2 = 0xfe;
const MAX_STRING = 4000;

const TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

// zlib.crc32(bytes, 0xFFFFFFFF) = ESP-IDF's esp_rom_crc32_le(0xFFFFFFFF, bytes)
export function crc32(bytes) {
  let c = 0;
  for (const b of bytes) c = TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (~c) >>> 0;
}

const put32 = (buf, off, v) => { buf[off] = v & 0xff; buf[off + 1] = (v >>> 8) & 0xff; buf[off + 2] = (v >>> 16) & 0xff; buf[off + 3] = (v >>> 24) & 0xff; };

export class NvsFullError extends Error {}

class Page {
  constructor(seq) {
    this.buf = new Uint8Array(PAGE_SIZE).fill(0xff);
    this.used = 0;
    const header = this.buf.subarray(0, 32);
    put32(header, 0, ACTIVE);
    put32(header, 4, seq);
    header[8] = VERSION2;
    put32(header, 28, crc32(header.subarray(4, 28)));
  }

  write(bytes, entries) {
    this.buf.set(bytes, FIRST_ENTRY + 32 * this.used);
    for (let i = 0; i < entries; i++) {
      const bit = (this.used + i) * 2;
      this.buf[32 + (bit >> 3)] &= ~(1 << (bit & 7));
    }
    this.used += entries;
  }
}

function entryHeader(ns, type, span, key) {
  const e = new Uint8Array(32).fill(0xff);
  e[0] = ns; e[1] = type; e[2] = span; e[3] = 0xff;
  e.fill(0, 8, 24);
  e.set(new TextEncoder().encode(key), 8);
  return e;
}

function sealEntry(e) {
  const crcData = new Uint8Array(28);
  crcData.set(e.subarray(0, 4), 0);
  crcData.set(e.subarray(8, 32), 4);
  put32(e, 4, crc32(crcData));
  return e;
}

// namespaces: [[name, [[key, string value], ...]], ...] in write order; size: the nvs partition's size.
export function buildNvs(namespaces, size) {
  if (size % PAGE_SIZE || size < 3 * PAGE_SIZE) throw new Error(`nvs partition size ${size} is not a read-write NVS`);
  const usable = size / PAGE_SIZE - 1;
  const pages = [new Page(0)];
  const fresh = () => {
    if (pages.length >= usable) throw new NvsFullError(`the settings do not fit the 0x${size.toString(16)}-byte nvs partition`);
    put32(pages[pages.length - 1].buf, 0, FULL);
    pages.push(new Page(pages.length));
    return pages[pages.length - 1];
  };
  let page = pages[0];
  let index = 0;
  for (const [name, items] of namespaces) {
    if (new TextEncoder().encode(name).length > 15) throw new Error(`namespace ${name} is longer than 15 bytes`);
    index += 1;
    if (page.used >= ENTRIES) page = fresh();
    const ns = entryHeader(0, 0x01, 1, name);
    ns.fill(0xff, 24, 32);
    ns[24] = index;
    page.write(sealEntry(ns), 1);
    for (const [key, value] of items) {
      if (new TextEncoder().encode(key).length > 15) throw new Error(`key ${key} is longer than 15 bytes`);
      const data = new TextEncoder().encode(value + "\0");
      if (data.length > MAX_STRING) throw new Error(`${key}: ${data.length} bytes; an NVS string holds at most ${MAX_STRING}`);
      const dataEntries = Math.ceil(data.length / 32);
      if (page.used >= ENTRIES || page.used + dataEntries + 1 >= ENTRIES) page = fresh();
      if (dataEntries + 1 >= ENTRIES) throw new NvsFullError(`${key}: too long for one NVS page`);
      const e = entryHeader(index, 0x21, dataEntries + 1, key);
      e[24] = data.length & 0xff; e[25] = data.length >>> 8;
      put32(e, 28, crc32(data));
      page.write(sealEntry(e), 1);
      page.write(data, dataEntries);
    }
  }
  const image = new Uint8Array(size).fill(0xff);
  pages.forEach((p, i) => image.set(p.buf, i * PAGE_SIZE));
  return image;
}

// What `xzbuild provision` writes: namespace "wifi", each ssid/password pair (ssid, password, ssid1, password1 …,
// esp-wifi-connect's SsidManager keys), then ota_url (main/ota.cc). Checks as the command line does.
export function provisionEntries({ otaUrl = "", networks = [], assetsUrl = "" }) {
  const items = [];
  if (networks.length > 10) throw new Error(`${networks.length} Wi-Fi networks; the firmware keeps at most 10`);
  networks.forEach(([ssid, password], i) => {
    const n = new TextEncoder().encode(ssid).length;
    if (!n) throw new Error("the Wi-Fi name (SSID) is empty");
    if (n > 32) throw new Error(`SSID ${JSON.stringify(ssid)} is ${n} bytes; Wi-Fi SSIDs are at most 32 bytes`);
    if (new TextEncoder().encode(password).length > 64) throw new Error(`the password for ${JSON.stringify(ssid)} is over 64 bytes`);
    const suffix = i ? String(i) : "";
    items.push([`ssid${suffix}`, ssid], [`password${suffix}`, password]);
  });
  if (otaUrl) {
    let url;
    try { url = new URL(otaUrl); } catch (e) { url = null; }
    if (!url || !/^https?:$/.test(url.protocol) || !url.host || !/^https?:\/\//i.test(otaUrl)) {
      throw new Error(`${JSON.stringify(otaUrl)} is not an http:// or https:// URL; write it in full, e.g. http://192.168.1.10:8002/xiaozhi/ota/`);
    }
    if (/\s/.test(otaUrl)) throw new Error("the server URL contains spaces");
    if (otaUrl.length < 10) throw new Error("the server URL is shorter than 10 characters, which the firmware refuses");
    items.push(["ota_url", otaUrl]);
  }
  if (!items.length) throw new Error("nothing to provision: give a server URL and/or a Wi-Fi network");
  if (!assetsUrl) return [["wifi", items]];
  // Application::CheckAssetsVersion (main/application.cc) reads Settings("assets").GetString("download_url")
  if (!networks.length) throw new Error("leaving the assets to Wi-Fi needs a Wi-Fi network to download them over");
  if (!/^https?:\/\//i.test(assetsUrl)) throw new Error(`${JSON.stringify(assetsUrl)} is not an http:// or https:// URL`);
  return [["wifi", items], ["assets", [["download_url", assetsUrl]]]];
}
