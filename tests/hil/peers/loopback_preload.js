// Preloaded into the MQTT gateway peer under test (node --require): every TCP listen and UDP bind without an
// explicit host goes to 127.0.0.1, so the peer never listens on another interface.
'use strict';
const net = require('net');
const dgram = require('dgram');

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' && typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
  return listen.apply(this, args);
};
const bind = dgram.Socket.prototype.bind;
dgram.Socket.prototype.bind = function (...args) {
  if (typeof args[0] === 'number' && typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
  return bind.apply(this, args);
};
