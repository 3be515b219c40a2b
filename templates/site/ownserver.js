// "Install with my own server": the factory install plus an NVS image made here, in the browser, that points the
// board at the reader's server (NVS wifi/ota_url) and Wi-Fi network — the same bytes `xzbuild provision` writes.
// ESP Web Tools flashes it: the page hands it a manifest (a blob: URL) whose parts are the release's factory
// parts and the NVS image at the variant's nvs partition offset, written after them.
import { buildNvs, provisionEntries } from "./nvsgen.js";

for (const form of document.querySelectorAll("form.own-server-form")) {
  const section = form.closest("section.variant");
  const status = form.querySelector(".own-server-status");
  const holder = form.parentElement.querySelector(".own-install");
  const factory = section.querySelector("esp-web-install-button[data-kind=factory]");
  let urls = [];
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    holder.replaceChildren();
    urls.forEach((u) => URL.revokeObjectURL(u));
    urls = [];
    try {
      const data = new FormData(form);
      const ssid = String(data.get("ssid") || "");
      // "Leave the assets to Wi-Fi": the parts of the update manifest (every image but NVS, one by one) without
      // the assets image, erased and written like the factory install; NVS assets/download_url names the
      // assets image on this site, which the board downloads at its first start (Assets::Download)
      const overWifi = data.get("assets_over_wifi") === "on";
      const source = overWifi ? section.querySelector("esp-web-install-button[data-kind=update]") : factory;
      if (!source) throw new Error("this variant has no per-part manifest to leave the assets out of");
      const manifestURL = new URL(source.getAttribute("manifest"), location.href);
      const manifest = await (await fetch(manifestURL)).json();
      const assetsOffset = Number(section.dataset.assetsOffset);
      let assetsUrl = "";
      if (overWifi) {
        const part = manifest.builds[0].parts.find((p) => p.offset === assetsOffset);
        if (!part) throw new Error("the release lists no assets image at the assets partition");
        assetsUrl = new URL(part.path, manifestURL).href;
        // no whole-chip erase (the update manifest's new_install_prompt_erase: ESP Web Tools asks, unticked): the
        // parts are erased where they are written, NVS and otadata are written whole, and Assets::Download erases
        // each assets sector before writing it and writes the header last, so no earlier life's byte is read
      }
      const entries = provisionEntries({
        otaUrl: String(data.get("ota_url") || "").trim(),
        networks: ssid ? [[ssid, String(data.get("password") || "")]] : [],
        assetsUrl,
      });
      const offset = Number(section.dataset.nvsOffset);
      const image = buildNvs(entries, Number(section.dataset.nvsSize));
      const nvsURL = URL.createObjectURL(new Blob([image], { type: "application/octet-stream" }));
      urls.push(nvsURL);
      manifest.name = `${manifest.name} with my server` + (overWifi ? ", assets over Wi-Fi" : "");
      manifest.builds = manifest.builds.map((build) => ({
        ...build,
        parts: [...build.parts.filter((p) => !overWifi || p.offset !== assetsOffset)
                  .map((p) => ({ path: new URL(p.path, manifestURL).href, offset: p.offset })),
                { path: nvsURL, offset }],
      }));
      const own = URL.createObjectURL(new Blob([JSON.stringify(manifest)], { type: "application/json" }));
      urls.push(own);
      // The button exists only once its manifest does (an install button must always name one).
      const button = document.createElement("esp-web-install-button");
      button.setAttribute("manifest", own);
      button.dataset.kind = "own";
      button.dataset.variant = holder.dataset.variant;
      const activate = document.createElement("button");
      activate.slot = "activate";
      activate.className = "btn";
      activate.textContent = `Install ${holder.dataset.variant} with my server`;
      button.append(activate);
      holder.append(button);
      // the values themselves, as they will be written (the password only by its length)
      const said = entries.flatMap(([, items]) => items).map(([k, v]) => (k.startsWith("password")
        ? `${k} (${[...v].length} characters)` : `${k} "${v}"`));
      status.textContent = `Ready: this writes ${said.join(", ")} into the settings partition at ` +
        `0x${offset.toString(16)}. Press the button to install.`;
    } catch (e) {
      status.textContent = e && e.message ? e.message : String(e);
    }
  });
}
