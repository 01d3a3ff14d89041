// The isolation hook (TA-03): a message reaches Rust only if its command is one of the app's
// own (allowlist.js, generated from the Rust command signatures) and its arguments have exactly
// the declared names and JSON types. Anything else is dropped here, before Rust sees it, and
// logged. Defense in depth: Rust still checks every capability and validates every argument.
(function () {
  "use strict";
  var commands = self.SWITCHBOARD_IPC_COMMANDS;
  // Tauri's own messages the app's API uses: events and channel data.
  var internal = {
    "plugin:event|listen": true,
    "plugin:event|unlisten": true,
    "plugin:__TAURI_CHANNEL__|fetch": true,
  };

  function typeOk(kind, v) {
    if (kind.slice(-1) === "?") {
      if (v === null || v === undefined) return true;
      kind = kind.slice(0, -1);
    }
    switch (kind) {
      case "string": return typeof v === "string";
      case "boolean": return typeof v === "boolean";
      case "number": return typeof v === "number" && isFinite(v);
      case "channel": return typeof v === "string" && /^__CHANNEL__:\d+$/.test(v);
      case "string_map":
        if (v === null || typeof v !== "object" || Array.isArray(v)) return false;
        return Object.keys(v).every(function (k) { return typeof v[k] === "string"; });
      case "object": return v !== null && typeof v === "object" && !Array.isArray(v);
      case "array": return Array.isArray(v);
      case "string_array":
        return Array.isArray(v) && v.every(function (x) { return typeof x === "string"; });
      default: return false;
    }
  }

  /** Why `message` is refused, or null when it may pass. */
  function refuse(message) {
    var cmd = message && message.cmd;
    if (typeof cmd !== "string") return "no command name";
    if (Object.prototype.hasOwnProperty.call(internal, cmd)) return null;
    if (!Object.prototype.hasOwnProperty.call(commands, cmd)) return "unknown command " + JSON.stringify(cmd);
    var shape = commands[cmd];
    var args = message.payload === undefined || message.payload === null ? {} : message.payload;
    if (typeof args !== "object" || Array.isArray(args)) return cmd + ": arguments must be an object";
    var names = Object.keys(args);
    for (var i = 0; i < names.length; i++) {
      if (!Object.prototype.hasOwnProperty.call(shape, names[i])) return cmd + ": unexpected argument " + JSON.stringify(names[i]);
    }
    var wanted = Object.keys(shape);
    for (var j = 0; j < wanted.length; j++) {
      if (!typeOk(shape[wanted[j]], args[wanted[j]])) return cmd + ": argument " + wanted[j] + " must be " + shape[wanted[j]];
    }
    return null;
  }

  self.SWITCHBOARD_IPC_REFUSE = refuse;
  self.__TAURI_ISOLATION_HOOK__ = function (message) {
    var why = refuse(message);
    if (why !== null) {
      console.error("Switchboard isolation: dropped IPC message: " + why);
      throw new Error("dropped by the isolation hook: " + why);
    }
    return message;
  };
})();
