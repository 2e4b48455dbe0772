// The part of Node.js that competitive and test programs use, over QuickJS-NG's `qjs:std` and
// `qjs:os` modules. Evaluated before every JavaScript or TypeScript program. What exists:
//   require('fs'):       readFileSync (fd 0 or '/dev/stdin' is standard input; other paths are
//                        files in the run's directory), writeFileSync, appendFileSync,
//                        existsSync, writeSync (fd 1 and 2)
//   require('readline'): createInterface({input}) with on('line'|'close'), close(), question()
//                        and `for await (const line of rl)`
//   require('assert'):   assert, ok, equal, notEqual, strictEqual, notStrictEqual, deepEqual,
//                        deepStrictEqual, notDeepStrictEqual, throws
//   require('util'):     inspect, format (simplified), promisify (with promisify.custom),
//                        inherits, isDeepStrictEqual
//   require('timers'), require('timers/promises'): the timers below; setTimeout(ms, value)
//                        and setImmediate(value) as promises
//   process:             argv, env (empty), exit, exitCode, stdout.write, stderr.write,
//                        stdin.on('data'|'end'), stdin.setEncoding/resume, nextTick, hrtime,
//                        platform, on('exit')
//   Buffer:              from(string), toString() (UTF-8 only), byteLength
//   setTimeout, clearTimeout, setInterval, clearInterval, setImmediate, clearImmediate,
//   queueMicrotask
// Anything else `require`d throws "Cannot find module", as Node does for a missing module.
(function () {
  'use strict';
  const std = globalThis.std;
  const os = globalThis.os;
  delete globalThis.std;
  delete globalThis.os;
  delete globalThis.bjson;

  function utf8Encode(text) {
    const out = [];
    for (const ch of String(text)) {
      let c = ch.codePointAt(0);
      if (c < 0x80) out.push(c);
      else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
      else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
      else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    }
    return out;
  }

  function utf8Decode(bytes) {
    let s = '';
    for (let i = 0; i < bytes.length;) {
      const b = bytes[i];
      let c, n;
      if (b < 0x80) { c = b; n = 1; }
      else if (b >= 0xf0) { c = b & 7; n = 4; }
      else if (b >= 0xe0) { c = b & 15; n = 3; }
      else if (b >= 0xc0) { c = b & 31; n = 2; }
      else { s += '\ufffd'; i += 1; continue; }
      for (let k = 1; k < n; k++) c = (c << 6) | ((bytes[i + k] ?? 0) & 63);
      s += String.fromCodePoint(c > 0x10ffff ? 0xfffd : c);
      i += n;
    }
    return s;
  }

  class Buffer extends Uint8Array {
    static from(value, encoding) {
      if (typeof value === 'string') return Buffer.of(...utf8Encode(value));
      return new Buffer(value);
    }
    static byteLength(text) { return utf8Encode(text).length; }
    static isBuffer(value) { return value instanceof Buffer; }
    toString() { return utf8Decode(this); }
  }
  globalThis.Buffer = Buffer;

  let stdinText = null;
  function stdinString() {
    if (stdinText === null) stdinText = std.in.readAsString() ?? '';
    return stdinText;
  }

  function format(args) {
    return args.map((a) => (typeof a === 'string' ? a : inspect(a))).join(' ');
  }
  function inspect(value) {
    if (typeof value === 'string') return `'${value}'`;
    if (typeof value === 'bigint') return `${value}n`;
    if (Array.isArray(value)) return value.length ? `[ ${value.map(inspect).join(', ')} ]` : '[]';
    if (value && typeof value === 'object') {
      if (value instanceof Error) return value.stack ? `${value}\n${value.stack}` : String(value);
      if (value instanceof Map) return `Map(${value.size}) {${[...value].map(([k, v]) => ` ${inspect(k)} => ${inspect(v)}`).join(',')} }`;
      if (value instanceof Set) return `Set(${value.size}) {${[...value].map((v) => ` ${inspect(v)}`).join(',')} }`;
      const keys = Object.keys(value);
      return keys.length ? `{ ${keys.map((k) => `${k}: ${inspect(value[k])}`).join(', ')} }` : '{}';
    }
    return String(value);
  }

  function writeOut(text) { std.out.puts(String(text)); return true; }
  function writeErr(text) { std.err.puts(String(text)); return true; }
  globalThis.console = {
    log: (...a) => writeOut(format(a) + '\n'),
    info: (...a) => writeOut(format(a) + '\n'),
    debug: (...a) => writeOut(format(a) + '\n'),
    error: (...a) => writeErr(format(a) + '\n'),
    warn: (...a) => writeErr(format(a) + '\n'),
    trace: (...a) => writeErr(format(a) + '\n'),
    assert: (cond, ...a) => { if (!cond) writeErr('Assertion failed' + (a.length ? ': ' + format(a) : '') + '\n'); },
  };

  const exitHandlers = [];
  const onceQueue = (fn) => Promise.resolve().then(fn);
  function finish(code) {
    const final = process.exitCode !== undefined ? process.exitCode : code;
    for (const handler of exitHandlers.splice(0)) handler(final);
    std.out.flush();
    std.err.flush();
    std.exit(Number(process.exitCode !== undefined ? process.exitCode : final) | 0);
  }

  function emitter(target) {
    const handlers = {};
    target.on = target.addListener = (event, fn) => { (handlers[event] ??= []).push(fn); return target; };
    target.once = (event, fn) => target.on(event, function once(...a) {
      handlers[event] = handlers[event].filter((h) => h !== once);
      fn(...a);
    });
    target.off = target.removeListener = (event, fn) => {
      handlers[event] = (handlers[event] ?? []).filter((h) => h !== fn);
      return target;
    };
    target.emit = (event, ...a) => { for (const fn of handlers[event] ?? []) fn(...a); return true; };
    target.listenerCount = (event) => (handlers[event] ?? []).length;
    return target;
  }

  const stdin = emitter({ fd: 0, isTTY: false });
  let stdinFlowing = false;
  const stdinOn = stdin.on;
  stdin.on = stdin.addListener = (event, fn) => {
    stdinOn(event, fn);
    if ((event === 'data' || event === 'end' || event === 'readable') && !stdinFlowing) {
      stdinFlowing = true;
      onceQueue(() => {
        // With 'readable' listeners the program pulls with read(); else 'data' pushes.
        if (stdin.listenerCount('readable') > 0) stdin.emit('readable');
        else {
          const text = stdinString();
          if (text.length) stdin.emit('data', text);
        }
        stdin.emit('end');
        stdin.emit('close');
      });
    }
    return stdin;
  };
  stdin.setEncoding = () => stdin;
  stdin.resume = () => stdin;
  stdin.pause = () => stdin;
  let stdinDrained = false;
  stdin.read = () => {
    if (stdinDrained) return null;
    stdinDrained = true;
    const t = stdinString();
    return t.length ? t : null;
  };
  stdin[Symbol.asyncIterator] = async function* () { const t = stdinString(); if (t.length) yield t; };

  const started = Date.now();
  globalThis.process = emitter({
    argv: ['node', '/tmp/main.js'],
    env: {},
    platform: 'wasi',
    version: 'v20.0.0',
    versions: {},
    pid: 1,
    exitCode: undefined,
    stdin,
    stdout: { write: writeOut, fd: 1, isTTY: false },
    stderr: { write: writeErr, fd: 2, isTTY: false },
    exit: (code) => finish(code === undefined ? 0 : code),
    cwd: () => '/tmp',
    nextTick: (fn, ...a) => queueMicrotask(() => fn(...a)),
    hrtime: Object.assign((prev) => {
      const ns = BigInt(Math.round((Date.now() - started) * 1e6));
      const t = [Number(ns / 1000000000n), Number(ns % 1000000000n)];
      return prev ? [t[0] - prev[0], t[1] - prev[1]] : t;
    }, { bigint: () => BigInt(Math.round((Date.now() - started) * 1e6)) }),
    memoryUsage: () => ({ rss: 0, heapTotal: 0, heapUsed: 0, external: 0 }),
  });
  const processOn = process.on;
  process.on = process.addListener = (event, fn) => {
    if (event === 'exit') exitHandlers.push(fn);
    return processOn(event, fn);
  };

  // Timers as Node.js has them: extra arguments go to the callback (QuickJS's own timers drop
  // them), and a delay that is not a number from 1 to 2^31-1 becomes 1, as Node coerces it.
  // `util.promisify(setTimeout)` and `util.promisify(setImmediate)` use Node's custom
  // promisified forms (`setTimeout(ms, value)` resolving with `value`), which are also
  // `require('timers/promises')`.
  const promisifyCustom = Symbol.for('nodejs.util.promisify.custom');
  const timerDelay = (ms) => {
    const delay = Number(ms);
    return delay >= 1 && delay <= 2147483647 ? delay : 1;
  };
  const callback = (fn) => {
    if (typeof fn !== 'function') {
      throw new TypeError('The "callback" argument must be of type function');
    }
    return fn;
  };
  const schedule = (fn, ms, a) => os.setTimeout(a.length ? () => fn(...a) : () => fn(), ms);
  const timersPromises = {
    setTimeout: (ms, value) => new Promise((resolve) => os.setTimeout(() => resolve(value), timerDelay(ms))),
    setImmediate: (value) => new Promise((resolve) => os.setTimeout(() => resolve(value), 0)),
  };
  globalThis.queueMicrotask ??= (fn) => { Promise.resolve().then(fn); };
  globalThis.setTimeout = function setTimeout(fn, ms, ...a) { return schedule(callback(fn), timerDelay(ms), a); };
  globalThis.clearTimeout = function clearTimeout(handle) { if (handle !== undefined && handle !== null) os.clearTimeout(handle); };
  globalThis.setInterval = function setInterval(fn, ms, ...a) {
    callback(fn);
    const delay = timerDelay(ms);
    const handle = { timer: null, cleared: false };
    const tick = () => { if (!handle.cleared) { handle.timer = os.setTimeout(tick, delay); fn(...a); } };
    handle.timer = os.setTimeout(tick, delay);
    return handle;
  };
  globalThis.clearInterval = function clearInterval(handle) { if (handle) { handle.cleared = true; os.clearTimeout(handle.timer); } };
  globalThis.setImmediate = function setImmediate(fn, ...a) { return schedule(callback(fn), 0, a); };
  globalThis.clearImmediate = globalThis.clearTimeout;
  Object.defineProperty(globalThis.setTimeout, promisifyCustom, { value: timersPromises.setTimeout });
  Object.defineProperty(globalThis.setImmediate, promisifyCustom, { value: timersPromises.setImmediate });
  const timers = {
    setTimeout: globalThis.setTimeout,
    clearTimeout: globalThis.clearTimeout,
    setInterval: globalThis.setInterval,
    clearInterval: globalThis.clearInterval,
    setImmediate: globalThis.setImmediate,
    clearImmediate: globalThis.clearImmediate,
    promises: timersPromises,
  };

  function noEntry(path) {
    const e = new Error(`ENOENT: no such file or directory, open '${path}'`);
    e.code = 'ENOENT';
    return e;
  }
  function encodingOf(options) {
    return typeof options === 'string' ? options : options && options.encoding;
  }
  const fs = {
    readFileSync(path, options) {
      let text;
      if (path === 0 || path === '/dev/stdin') text = stdinString();
      else {
        text = std.loadFile(String(path));
        if (text === null) throw noEntry(path);
      }
      return encodingOf(options) ? text : Buffer.from(text);
    },
    writeFileSync(path, data) {
      if (path === 1 || path === '/dev/stdout') return void writeOut(data);
      if (path === 2 || path === '/dev/stderr') return void writeErr(data);
      const f = std.open(String(path), 'w');
      if (!f) throw noEntry(path);
      f.puts(typeof data === 'string' ? data : String(data));
      f.close();
    },
    appendFileSync(path, data) {
      const f = std.open(String(path), 'a');
      if (!f) throw noEntry(path);
      f.puts(String(data));
      f.close();
    },
    existsSync(path) { return os.stat(String(path))[1] === 0; },
    writeSync(fd, data) { if (fd === 2) writeErr(data); else writeOut(data); },
  };

  const readline = {
    createInterface(options) {
      const rl = emitter({ closed: false });
      let lines = null;
      const take = () => {
        if (lines === null) {
          lines = stdinString().split(/\r?\n/);
          if (lines.length && lines[lines.length - 1] === '') lines.pop();
        }
        return lines;
      };
      rl.close = () => { if (!rl.closed) { rl.closed = true; rl.emit('close'); } };
      rl.question = (query, fn) => { writeOut(query); onceQueue(() => fn(take().shift() ?? '')); };
      rl.setPrompt = () => {};
      rl.prompt = () => {};
      rl.pause = () => rl;
      rl.resume = () => rl;
      rl[Symbol.asyncIterator] = async function* () {
        const all = take();
        while (all.length && !rl.closed) yield all.shift();
      };
      const rlOn = rl.on;
      let started = false;
      rl.on = rl.addListener = (event, fn) => {
        rlOn(event, fn);
        if (event === 'line' && !started) {
          started = true;
          onceQueue(() => {
            const all = take();
            while (all.length && !rl.closed) rl.emit('line', all.shift());
            rl.close();
          });
        }
        return rl;
      };
      return rl;
    },
  };

  class AssertionError extends Error {
    constructor(message) { super(message); this.name = 'AssertionError'; this.code = 'ERR_ASSERTION'; }
  }
  function deepEqual(a, b, strict) {
    if (strict ? Object.is(a, b) : a == b) return true;
    if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
    if (strict && Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
    if (a instanceof Map || a instanceof Set) {
      if (!(b instanceof Map || b instanceof Set) || a.size !== b.size) return false;
      return deepEqual([...a], [...b], strict);
    }
    const ka = Object.keys(a), kb = Object.keys(b);
    if (ka.length !== kb.length) return false;
    return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k], strict));
  }
  function check(ok, message, fallback) {
    if (ok) return;
    if (message instanceof Error) throw message;
    throw new AssertionError(message ?? fallback());
  }
  const assert = (value, message) => check(value, message, () => 'The expression evaluated to a falsy value');
  Object.assign(assert, {
    AssertionError,
    ok: assert,
    equal: (a, b, m) => check(a == b, m, () => `${inspect(a)} == ${inspect(b)}`),
    notEqual: (a, b, m) => check(a != b, m, () => `${inspect(a)} != ${inspect(b)}`),
    strictEqual: (a, b, m) => check(Object.is(a, b), m, () => `Expected values to be strictly equal:\n\n${inspect(a)} !== ${inspect(b)}`),
    notStrictEqual: (a, b, m) => check(!Object.is(a, b), m, () => `Expected "actual" to be strictly unequal to: ${inspect(b)}`),
    deepEqual: (a, b, m) => check(deepEqual(a, b, false), m, () => `Expected values to be loosely deep-equal:\n\n${inspect(a)}\n\nshould loosely deep-equal\n\n${inspect(b)}`),
    deepStrictEqual: (a, b, m) => check(deepEqual(a, b, true), m, () => `Expected values to be strictly deep-equal:\n${inspect(a)}\n\nshould equal\n\n${inspect(b)}`),
    notDeepStrictEqual: (a, b, m) => check(!deepEqual(a, b, true), m, () => 'Expected "actual" not to be strictly deep-equal to "expected"'),
    throws: (fn, _expected, m) => {
      try { fn(); } catch (e) { return; }
      throw new AssertionError(typeof _expected === 'string' ? _expected : m ?? 'Missing expected exception.');
    },
  });
  assert.strict = assert;

  // util.promisify: a Node-style callback API (`fn(...args, (err, value) => …)`) as a
  // function returning a promise of `value`; a function that carries its own promisified form
  // under `util.promisify.custom` (as `setTimeout` and `setImmediate` do) gives that form.
  const promisify = (original) => {
    if (typeof original !== 'function') {
      throw new TypeError('The "original" argument must be of type function');
    }
    const custom = original[promisifyCustom];
    if (custom !== undefined) {
      if (typeof custom !== 'function') {
        throw new TypeError('The "util.promisify.custom" argument must be of type function');
      }
      return custom;
    }
    const promised = function (...args) {
      return new Promise((resolve, reject) => {
        original.call(this, ...args, (err, value) => (err ? reject(err) : resolve(value)));
      });
    };
    Object.defineProperty(promised, promisifyCustom, { value: promised });
    return promised;
  };
  promisify.custom = promisifyCustom;
  const inherits = (ctor, superCtor) => {
    Object.setPrototypeOf(ctor.prototype, superCtor.prototype);
    Object.setPrototypeOf(ctor, superCtor);
    ctor.super_ = superCtor;
  };
  const util = {
    inspect,
    format: (...a) => format(a),
    promisify,
    inherits,
    isDeepStrictEqual: (a, b) => deepEqual(a, b, true),
  };
  const modules = { fs, readline, assert, util, timers, process: globalThis.process, 'timers/promises': timersPromises, 'assert/strict': assert, 'fs/promises': null };
  globalThis.require = function require(name) {
    const bare = String(name).replace(/^node:/, '');
    const found = modules[bare];
    if (found) return found;
    const e = new Error(`Cannot find module '${name}'`);
    e.code = 'MODULE_NOT_FOUND';
    throw e;
  };
  globalThis.module = { exports: {} };
  globalThis.exports = globalThis.module.exports;
  Object.defineProperty(globalThis, '__grpoFinish', { value: finish, enumerable: false });
})();
