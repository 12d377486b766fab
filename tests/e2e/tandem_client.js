// Helpers for the end-to-end tests: start tandem-server, and talk to it with
// @grpc/grpc-js loading the repository's .proto files (no generated code of
// ours is involved).
'use strict';
const path = require('node:path');
const { spawn } = require('node:child_process');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const BIN_DIR = process.env.TANDEM_BIN_DIR || path.join(__dirname, '../../build/bin');

const definition = protoLoader.loadSync(
  ['tandem/v1/generation.proto', 'grpc/health/v1/health.proto',
    'grpc/reflection/v1alpha/reflection.proto'],
  {
    includeDirs: [path.join(__dirname, '../../proto'), path.join(__dirname, 'protos')],
    keepCase: true, longs: String, enums: String, defaults: true, oneofs: true,
  });
const proto = grpc.loadPackageDefinition(definition);

// Starts tandem-server on a free port; resolves once it logs its address.
function startServer(args = []) {
  return new Promise((resolve, reject) => {
    const proc = spawn(path.join(BIN_DIR, 'tandem-server'),
      ['--listen=127.0.0.1:0', '--metrics_listen=', ...args],  // a later --metrics_listen wins
      { stdio: ['ignore', 'inherit', 'pipe'] });
    let log = '';
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${log}`)), 120000);
    proc.log = () => log;
    proc.stderr.on('data', (chunk) => {
      log += chunk.toString();
      process.stderr.write(chunk);
      const match = log.match(/gRPC listening on (\S+):(\d+)/);
      if (match && !proc.address) {
        clearTimeout(timer);
        proc.address = `127.0.0.1:${match[2]}`;
        const http = log.match(/HTTPS? \/metrics, \/healthz, \/readyz.*? on \S+:(\d+)/);
        if (http) proc.metricsAddress = `127.0.0.1:${http[1]}`;
        proc.exited = new Promise((done) => proc.on('exit', (code, signal) => done({ code, signal })));
        resolve(proc);
      }
    });
    proc.on('exit', (code) => { clearTimeout(timer); if (!proc.address) reject(new Error(`server exited ${code}:\n${log}`)); });
  });
}

function clients(address) {
  const creds = grpc.credentials.createInsecure();
  return {
    generation: new proto.tandem.v1.Generation(address, creds),
    health: new proto.grpc.health.v1.Health(address, creds),
    reflection: new proto.grpc.reflection.v1alpha.ServerReflection(address, creds),
  };
}

// Promisified unary call.
function unary(client, method, request, options = {}) {
  return new Promise((resolve, reject) => {
    client[method](request, options, (err, response) => (err ? reject(err) : resolve(response)));
  });
}

// Runs one Generate stream to its end. Resolves with everything received and
// the error, if any (never rejects). `onData(response, call)` sees each chunk.
function generate(client, request, { deadlineMs, onData } = {}) {
  return new Promise((resolve) => {
    const options = deadlineMs ? { deadline: new Date(Date.now() + deadlineMs) } : {};
    const call = client.Generate(request, options);
    const result = { responses: [], text: '', ids: [], last: null, error: null };
    call.on('data', (response) => {
      result.responses.push(response);
      result.text += response.text;
      result.ids.push(...response.token_ids);
      if (response.finish_reason !== 'FINISH_REASON_UNSPECIFIED') result.last = response;
      if (onData) onData(response, call);
    });
    call.on('error', (error) => { result.error = error; resolve(result); });
    call.on('end', () => resolve(result));
  });
}

// GET over HTTP; resolves { status, body }.
function httpGet(url) {
  return new Promise((resolve, reject) => {
    require('node:http').get(url, (res) => {
      let body = '';
      res.on('data', (c) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode, body }));
    }).on('error', reject);
  });
}

// A free TCP port on 127.0.0.1 (for servers that cannot bind port 0).
function freePort() {
  return new Promise((resolve) => {
    const srv = require('node:net').createServer();
    srv.listen(0, '127.0.0.1', () => { const { port } = srv.address(); srv.close(() => resolve(port)); });
  });
}

// Value of one sample line of a /metrics text, e.g.
// metricSample(text, 'tandem_requests_total{finish_reason="stop"}'); throws
// when the series is not exported.
function metricSample(text, series) {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  if (!line) throw new Error(`series ${series} is not exported`);
  return Number(line.slice(series.length + 1));
}

module.exports = {
  grpc, proto, startServer, clients, unary, generate, httpGet, freePort, metricSample, BIN_DIR,
};
