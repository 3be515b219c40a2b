// A Web Serial stand-in (navigator.serial) whose ports are virtual boards behind hil/vboard/wsbridge.py.
//
// Load it before the page's scripts (Playwright: page.add_init_script) after setting
// window.__XZ_SERIAL = {url: "ws://127.0.0.1:PORT/serial/<board>", usbVendorId, usbProductId}.
// It follows the Web Serial API as ESP Web Tools and esptool-js use it: requestPort/getPorts, open/close,
// a `readable` that is replaced by a new stream after a reader cancels it, a `writable`, setSignals
// (DTR/RTS: sent to the bridge, which drives the board's reset circuit) and getInfo. Bytes the board sends
// while no reader is waiting are kept, as the OS buffer of a real port would keep them.
(() => {
  "use strict";

  class VirtualSerialPort extends EventTarget {
    constructor(config) {
      super();
      this._config = config;
      this._ws = null;
      this._queue = [];
      this._waiters = [];
      this._readable = null;
      this._writable = null;
      this.onconnect = null;
      this.ondisconnect = null;
    }

    getInfo() {
      return {usbVendorId: this._config.usbVendorId, usbProductId: this._config.usbProductId};
    }

    get connected() {
      return true;
    }

    async open(options) {
      if (this._ws) throw new DOMException("The port is already open.", "InvalidStateError");
      if (!options || !options.baudRate) throw new TypeError("baudRate is required");
      const ws = new WebSocket(this._config.url);
      ws.binaryType = "arraybuffer";
      await new Promise((resolve, reject) => {
        ws.onopen = resolve;
        ws.onerror = () => reject(new DOMException("Failed to open serial port.", "NetworkError"));
      });
      ws.onmessage = (event) => {
        if (typeof event.data === "string") return;
        const chunk = new Uint8Array(event.data);
        const waiter = this._waiters.shift();
        if (waiter) waiter(chunk);
        else this._queue.push(chunk);
      };
      ws.onclose = () => this._release(null);
      this._ws = ws;
      this._queue = [];
      this._readable = null;
      this._writable = null;
      window.__XZ_SERIAL_LOG && window.__XZ_SERIAL_LOG.push(["open", options.baudRate]);
    }

    _release(value) {
      const waiters = this._waiters;
      this._waiters = [];
      for (const waiter of waiters) waiter(value);
    }

    _next() {
      if (this._queue.length) return Promise.resolve(this._queue.shift());
      if (!this._ws) return Promise.resolve(null);
      return new Promise((resolve) => this._waiters.push(resolve));
    }

    get readable() {
      if (!this._ws) return null;
      if (!this._readable) {
        const stream = new ReadableStream({
          pull: async (controller) => {
            const chunk = await this._next();
            if (this._readable !== stream) {
              // cancelled while waiting: give the bytes back to the port for the next stream
              if (chunk) this._queue.unshift(chunk);
              return;
            }
            if (chunk === null) {
              controller.close();
              this._readable = null;
              return;
            }
            controller.enqueue(chunk);
          },
          cancel: () => {
            this._readable = null;
            this._release(undefined);
          },
        }, {highWaterMark: 0});
        this._readable = stream;
      }
      return this._readable;
    }

    get writable() {
      if (!this._ws) return null;
      if (!this._writable) {
        const stream = new WritableStream({
          write: (chunk) => {
            if (!this._ws || this._ws.readyState !== WebSocket.OPEN) {
              throw new DOMException("The device has been lost.", "NetworkError");
            }
            this._ws.send(chunk instanceof Uint8Array ? chunk : new Uint8Array(chunk));
          },
          close: () => {
            if (this._writable === stream) this._writable = null;
          },
          abort: () => {
            if (this._writable === stream) this._writable = null;
          },
        }, {highWaterMark: 1});
        this._writable = stream;
      }
      return this._writable;
    }

    async setSignals(signals) {
      if (!this._ws) throw new DOMException("The port is closed.", "InvalidStateError");
      const lines = {};
      if (signals.dataTerminalReady !== undefined) lines.dtr = !!signals.dataTerminalReady;
      if (signals.requestToSend !== undefined) lines.rts = !!signals.requestToSend;
      this._ws.send(JSON.stringify(lines));
      window.__XZ_SERIAL_LOG && window.__XZ_SERIAL_LOG.push(["signals", lines]);
    }

    async getSignals() {
      return {dataCarrierDetect: false, clearToSend: false, ringIndicator: false, dataSetReady: false};
    }

    async close() {
      if (!this._ws) throw new DOMException("The port is already closed.", "InvalidStateError");
      if ((this._readable && this._readable.locked) || (this._writable && this._writable.locked)) {
        throw new TypeError("Cannot close a locked stream");
      }
      const ws = this._ws;
      this._ws = null;
      this._readable = null;
      this._writable = null;
      this._release(null);
      await new Promise((resolve) => {
        if (ws.readyState === WebSocket.CLOSED) return resolve();
        ws.addEventListener("close", () => resolve(), {once: true});
        ws.close();
      });
      window.__XZ_SERIAL_LOG && window.__XZ_SERIAL_LOG.push(["close"]);
    }

    async forget() {}
  }

  const config = window.__XZ_SERIAL;
  if (!config) return;
  const port = new VirtualSerialPort(config);
  window.__XZ_SERIAL_LOG = [];
  const serial = new EventTarget();
  serial.requestPort = async () => port;
  serial.getPorts = async () => [port];
  serial.onconnect = null;
  serial.ondisconnect = null;
  Object.defineProperty(Navigator.prototype, "serial", {configurable: true, get: () => serial});
})();
