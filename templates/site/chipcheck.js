// "Which firmware is mine?": read the connected chip with esptool-js (served by this site), pick the variant that
// fits and refuse the ones that cannot run on it. ESP Web Tools still does the flashing; this only reads.
//
// Read: chip family (esptool-js's detection), chip revision (eFuse major/minor), flash size (SPI flash ID),
// embedded PSRAM (eFuse, when the chip reports it), and the installed app's descriptor (esp_app_desc_t at the
// start of the running app: version, project, ELF SHA-256), which names the installed variant when it is one
// of this release's (apps.json).
import { ESPLoader, Transport } from "./esptool-js/bundle.js";

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));
const sections = $$("section.variant[data-family]");
const button = $("#read-board");
const report = $("#board-report");
let installed = null; // {variant, version, page} of a recognised firmware, or {unknown: "..."}

const silent = { clean() {}, writeLine() {}, write() {} };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const cstr = (bytes) => new TextDecoder().decode(bytes.subarray(0, bytes.indexOf(0) < 0 ? bytes.length : bytes.indexOf(0)));
const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
const revText = (rev) => `v${Math.floor(rev / 100)}.${rev % 100}`;
const u32 = (b, o) => (b[o] | (b[o + 1] << 8) | (b[o + 2] << 16) | (b[o + 3] << 24)) >>> 0;

// Partition table (0xC00 bytes at 0x8000): 32-byte entries AA 50 type subtype offset size label.
function partitions(table) {
  const out = [];
  for (let i = 0; i + 32 <= table.length; i += 32) {
    if (table[i] !== 0xaa || table[i + 1] !== 0x50) break;
    out.push({ type: table[i + 2], subtype: table[i + 3], offset: u32(table, i + 4), size: u32(table, i + 8),
               label: cstr(table.subarray(i + 12, i + 28)) });
  }
  return out;
}

// otadata: two 32-byte entries (one per sector), u32 sequence … u32 crc; the highest valid sequence selects
// ota_{(seq - 1) % number of OTA slots}; without one the bootloader starts factory, else ota_0.
async function runningApp(loader, parts) {
  const apps = parts.filter((p) => p.type === 0);
  const ota = apps.filter((p) => p.subtype >= 0x10 && p.subtype < 0x20).sort((a, b) => a.subtype - b.subtype);
  const data = parts.find((p) => p.type === 1 && p.subtype === 0);
  if (data && ota.length) {
    const raw = await loader.readFlash(data.offset, 0x2000);
    const seqs = [u32(raw, 0), u32(raw, 0x1000)].filter((s) => s !== 0xffffffff && s !== 0);
    if (seqs.length) return ota[(Math.max(...seqs) - 1) % ota.length];
  }
  return apps.find((p) => p.subtype === 0) || ota[0] || null;
}

async function readBoard(port) {
  const transport = new Transport(port, false);
  const loader = new ESPLoader({ transport, baudrate: 115200, romBaudrate: 115200, terminal: silent });
  try {
    await loader.main();
    const chip = loader.chip;
    const family = chip.CHIP_NAME;
    let revision = null;
    if (chip.getMajorChipVersion && chip.getMinorChipVersion) {
      revision = (await chip.getMajorChipVersion(loader)) * 100 + (await chip.getMinorChipVersion(loader));
    } else if (chip.getChipRevision) {
      revision = (await chip.getChipRevision(loader)) * 100;
    }
    const features = String(await chip.getChipFeatures(loader)) + " " + String(await chip.getChipDescription(loader));
    const psramMatch = /PSRAM (\d+MB)/.exec(features);
    const flashId = await loader.readFlashId();
    const flash = loader.DETECTED_FLASH_SIZES[(flashId >> 16) & 0xff] || null;
    let app = null;
    const parts = partitions(await loader.readFlash(0x8000, 0xc00));
    const running = parts.length ? await runningApp(loader, parts) : null;
    if (running) {
      const head = await loader.readFlash(running.offset, 0xd0);
      if (head[0] === 0xe9 && u32(head, 0x20) === 0xabcd5432) {
        app = { version: cstr(head.subarray(0x30, 0x50)), project: cstr(head.subarray(0x50, 0x70)),
                elf: hex(head.subarray(0xb0, 0xd0)), partition: running.label };
      }
    }
    return { family, revision, flash, psram: psramMatch ? psramMatch[1] : null, app };
  } finally {
    try {
      await transport.setRTS(true); // leave the board running its firmware (ESP Web Tools' hard reset)
      await sleep(100);
      await loader.after();
    } catch (e) { /* the port may be gone */ }
    await transport.disconnect();
  }
}

// Why `section`'s firmware cannot run on `board`, or null.
function mismatch(section, board) {
  const d = section.dataset;
  if (d.family !== board.family) return `This firmware is for ${d.family}; your board has ${board.family}.`;
  if (board.revision !== null && d.revMin && (board.revision < +d.revMin || board.revision > +d.revMax)) {
    return `This firmware needs chip revision ${revText(+d.revMin)} to ${revText(+d.revMax)}; your chip is ` +
      `revision ${revText(board.revision)}, on which it does not boot.`;
  }
  if (board.flash && d.flash && parseInt(board.flash, 10) < parseInt(d.flash, 10)) {
    return `This firmware is for ${d.flash} of flash; your board has ${board.flash}.`;
  }
  return null;
}

async function recognise(app) {
  if (!app) return null;
  try {
    const apps = await (await fetch(new URL("../apps.json", import.meta.url))).json();
    const known = apps[app.elf];
    if (known) return { variant: known.variant, version: known.version, page: known.page };
  } catch (e) { /* offline copy without apps.json: treated as unknown */ }
  return { unknown: `${app.project || "firmware"} ${app.version}` };
}

function describe(board) {
  const bits = [board.family];
  if (board.revision !== null) bits.push(`revision ${revText(board.revision)}`);
  if (board.flash) bits.push(`${board.flash} flash`);
  bits.push(board.psram ? `embedded PSRAM ${board.psram}` : "no embedded PSRAM reported");
  return bits.join(", ");
}

function apply(board) {
  const fits = [];
  for (const section of sections) {
    const why = mismatch(section, board);
    section.classList.toggle("refused", !!why);
    section.classList.remove("match");
    const gate = $(".chip-gate", section);
    gate.hidden = !why;
    gate.textContent = why ? `Not for this board: ${why}` : "";
    if (!why) fits.push(section);
  }
  const byInstalled = installed && installed.variant && fits.find((s) => s.id === installed.variant);
  const chosen = byInstalled || (fits.length === 1 ? fits[0] : null);
  const picker = chosen && chosen.dataset.revision &&
    $(`.revision-picker input[value="${chosen.dataset.revision}"]`);
  if (picker) {
    picker.checked = true;
    picker.dispatchEvent(new Event("change", { bubbles: true }));
  }
  if (chosen) chosen.classList.add("match");
  let text = `Your board: ${describe(board)}. `;
  if (installed && installed.variant) text += `It runs ${installed.variant} ${installed.version}. `;
  else if (installed) text += `It runs ${installed.unknown} (not from this release). `;
  else text += "No xiaozhi firmware found on it. ";
  text += chosen ? `Matching firmware: ${chosen.id}.` :
    fits.length ? `Firmware that fits: ${fits.map((s) => s.id).join(", ")}.` :
    "None of the firmware on this page fits this board.";
  report.textContent = text;
  report.dataset.match = chosen ? chosen.id : "";
  if (chosen) chosen.scrollIntoView({ block: "start" });
}

// Installing another variant over a recognised (or unknown) firmware asks first, naming both. Delegated from the
// document (capture phase, before ESP Web Tools' own listener) so buttons created later are covered too.
document.addEventListener("click", (ev) => {
  const el = ev.target instanceof Element ? ev.target.closest("esp-web-install-button") : null;
  if (!el) return;
  const target = el.dataset.variant;
  if (!installed || installed.variant === target) return;
  const current = installed.variant ? `${installed.variant} ${installed.version}` : installed.unknown;
  const section = el.closest("section.variant");
  const version = section ? section.dataset.version : "";
  if (!window.confirm(`This board runs ${current}. Replace it with ${target} ${version}?`)) {
    ev.stopPropagation();
    ev.preventDefault();
  }
}, true);

if (button && "serial" in navigator) {
  button.hidden = false;
  button.addEventListener("click", async () => {
    button.disabled = true;
    report.textContent = "Reading the board…";
    try {
      const port = await navigator.serial.requestPort();
      const board = await readBoard(port);
      installed = await recognise(board.app);
      apply(board);
    } catch (e) {
      report.textContent = `Could not read the board: ${e && e.message ? e.message : e}. Hold BOOT while ` +
        "pressing RESET and try again.";
    } finally {
      button.disabled = false;
    }
  });
}
