// The deployment files, checked offline: yamllint on every YAML under
// deploy/, the Kubernetes manifests against the API schemas
// (kubernetes-models, with the Prometheus Operator, KEDA and Gateway API
// types; the InferencePool against its CRD's schema, vendored below), the
// PrometheusRule against deploy/prometheus/tandem-rules.yml and promtool,
// the Deployment's flags, probes, drain and security settings against
// tandem-server itself, the endpoint picker's metric names against the
// gauges the server exports, and the Dockerfile (dockerfilelint, stages,
// pins, COPY sources, the runtime packages against what the binaries load).
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { createRequire } = require('node:module');
const { BIN_DIR, startServer, httpGet } = require('./tandem_client');

const ROOT = path.join(__dirname, '../..');
const DEPLOY = path.join(ROOT, 'deploy');
const K8S = path.join(DEPLOY, 'k8s');
const INFERENCE = path.join(K8S, 'inference');

async function load() {
  const YAML = await import('yaml');
  const kustomization = YAML.parse(fs.readFileSync(path.join(K8S, 'kustomization.yaml'), 'utf8'));
  const docs = kustomization.resources.map((file) => ({
    file, doc: YAML.parse(fs.readFileSync(path.join(K8S, file), 'utf8')),
  }));
  return { YAML, docs };
}

async function modelClass(apiVersion, kind) {
  const modules = {
    'apps/v1': 'kubernetes-models/apps/v1',
    v1: 'kubernetes-models/v1',
    'monitoring.coreos.com/v1': '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1',
    'keda.sh/v1alpha1': '@kubernetes-models/keda/keda.sh/v1alpha1',
    'rbac.authorization.k8s.io/v1': 'kubernetes-models/rbac.authorization.k8s.io/v1',
    'gateway.networking.k8s.io/v1': '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1',
  };
  assert.ok(modules[apiVersion], `a schema for ${apiVersion}`);
  const model = (await import(modules[apiVersion]))[kind];
  assert.equal(typeof model, 'function', `a schema for ${apiVersion} ${kind}`);
  return model;
}

test('yamllint accepts every YAML file under deploy/', () => {
  const r = spawnSync('yamllint', ['-s', '-c', path.join(DEPLOY, '.yamllint'), DEPLOY], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

test('every manifest validates against its API schema, and the check can fail', async () => {
  const { docs } = await load();
  assert.deepEqual(docs.map((d) => d.doc.kind).sort(),
    ['Deployment', 'PrometheusRule', 'ScaledObject', 'Service', 'ServiceMonitor']);
  for (const { file, doc } of docs) {
    const Model = await modelClass(doc.apiVersion, doc.kind);
    assert.doesNotThrow(() => new Model(doc).validate(), file);
  }
  const deployment = structuredClone(docs.find((d) => d.doc.kind === 'Deployment').doc);
  deployment.spec.template.spec.containers[0].ports[0].containerPort = 'grpc';
  const Deployment = await modelClass('apps/v1', 'Deployment');
  assert.throws(() => new Deployment(deployment).validate(), /containerPort/);
});

test('the PrometheusRule carries deploy/prometheus/tandem-rules.yml, which promtool accepts', async () => {
  const { YAML, docs } = await load();
  const rule = docs.find((d) => d.doc.kind === 'PrometheusRule').doc;
  const rules = YAML.parse(fs.readFileSync(path.join(DEPLOY, 'prometheus/tandem-rules.yml'), 'utf8'));
  assert.deepEqual(rule.spec.groups, rules.groups);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tandem-deploy-'));
  fs.writeFileSync(path.join(dir, 'rules.yml'), YAML.stringify({ groups: rule.spec.groups }));
  const r = spawnSync('promtool', ['check', 'rules', path.join(dir, 'rules.yml')], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

test('the Deployment matches what tandem-server does', async () => {
  const { docs } = await load();
  const deployment = docs.find((d) => d.doc.kind === 'Deployment').doc;
  const pod = deployment.spec.template.spec;
  const [c] = pod.containers;
  // Every flag it passes is one the server knows.
  const help = spawnSync(path.join(BIN_DIR, 'tandem-server'), ['--helpfull'], { encoding: 'utf8' });
  const known = help.stdout + help.stderr;
  const flag = (name) => c.args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  for (const arg of c.args) {
    const name = arg.slice(2).split('=')[0];
    assert.match(known, new RegExp(`--${name} `), `tandem-server knows --${name}`);
  }
  // Ports and probes: gRPC health on the --listen port, /healthz on the HTTP one.
  const port = (name) => c.ports.find((p) => p.name === name).containerPort;
  assert.equal(Number(flag('listen').split(':')[1]), port('grpc'));
  assert.equal(Number(flag('metrics_listen').split(':')[1]), port('http'));
  for (const probe of ['startupProbe', 'readinessProbe']) assert.equal(c[probe].grpc.port, port('grpc'), probe);
  assert.equal(c.livenessProbe.httpGet.path, '/healthz');
  assert.ok(c.startupProbe.periodSeconds * c.startupProbe.failureThreshold >= 300, 'startup covers model loading');
  // The drain: the grace period outlasts the preStop wait plus --shutdown_grace.
  const grace = Number(flag('shutdown_grace').replace(/s$/, ''));
  const wait = Number(c.lifecycle.preStop.exec.command.at(-1));
  assert.ok(pod.terminationGracePeriodSeconds > grace + wait);
  // One GPU, and a locked-down container.
  assert.equal(String(c.resources.limits['nvidia.com/gpu']), '1');
  assert.equal(pod.securityContext.runAsNonRoot, true);
  assert.equal(c.securityContext.readOnlyRootFilesystem, true);
  assert.equal(c.securityContext.allowPrivilegeEscalation, false);
  assert.deepEqual(c.securityContext.capabilities.drop, ['ALL']);
  const models = c.volumeMounts.find((m) => m.mountPath === '/models');
  assert.equal(models.readOnly, true);
  assert.ok(flag('model').startsWith('/models/'));
});

test('the autoscaler and the monitor use what Tandem exports', async () => {
  const { docs } = await load();
  const exported = fs.readFileSync(path.join(__dirname, 'data/metric_series.txt'), 'utf8');
  const scaled = docs.find((d) => d.doc.kind === 'ScaledObject').doc;
  const query = scaled.spec.triggers[0].metadata.query;
  const metric = query.match(/tandem_[a-z_]+/)[0];
  assert.ok(exported.split('\n').includes(metric), `${metric} is exported`);
  assert.equal(scaled.spec.scaleTargetRef.name, docs.find((d) => d.doc.kind === 'Deployment').doc.metadata.name);
  const monitor = docs.find((d) => d.doc.kind === 'ServiceMonitor').doc;
  const service = docs.find((d) => d.doc.kind === 'Service').doc;
  // The Prometheus Operator names a ServiceMonitor's job after the Service
  // (unless its jobLabel names a label to take it from).
  assert.equal(monitor.spec.jobLabel, undefined, 'the job is the Service\'s name');
  assert.match(query, new RegExp(`\\{job="${service.metadata.name}"\\}`), 'the query counts Tandem\'s pods only');
  assert.ok(scaled.spec.minReplicaCount >= 1, 'the trigger cannot wake a deployment scaled to zero');
  assert.ok(service.spec.ports.some((p) => p.name === monitor.spec.endpoints[0].port));
  assert.equal(monitor.spec.endpoints[0].path, '/metrics');
});

test('the compose stack: pinned images, files that exist, configs promtool accepts', async () => {
  const YAML = await import('yaml');
  const dir = path.join(DEPLOY, 'compose');
  const compose = YAML.parse(fs.readFileSync(path.join(dir, 'docker-compose.yml'), 'utf8'));
  assert.deepEqual(Object.keys(compose.services).sort(), ['grafana', 'prometheus', 'tandem']);
  for (const [name, service] of Object.entries(compose.services)) {
    assert.match(service.image, /^[^:]+:(?!latest$)[\w.-]+$/, `${name}'s image is pinned`);
    for (const volume of service.volumes || []) {
      const host = volume.split(':')[0];
      assert.ok(fs.existsSync(path.resolve(dir, host)), `${name} mounts ${host}, which exists`);
    }
  }
  // The server's flags are real, and Prometheus scrapes its HTTP port.
  const help = spawnSync(path.join(BIN_DIR, 'tandem-server'), ['--helpfull'], { encoding: 'utf8' });
  for (const arg of compose.services.tandem.command) {
    assert.match(help.stdout + help.stderr, new RegExp(`--${arg.slice(2).split('=')[0]} `));
  }
  const httpPort = compose.services.tandem.command.find((a) => a.startsWith('--metrics_listen=')).split(':').pop();
  const promConfig = fs.readFileSync(path.join(dir, 'prometheus/prometheus.yml'), 'utf8');
  assert.ok(YAML.parse(promConfig).scrape_configs[0].static_configs[0].targets.includes(`tandem:${httpPort}`));
  // promtool on the config as the container sees it (the rules beside it).
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tandem-compose-'));
  fs.writeFileSync(path.join(tmp, 'prometheus.yml'), promConfig);
  fs.copyFileSync(path.join(DEPLOY, 'prometheus/tandem-rules.yml'), path.join(tmp, 'tandem-rules.yml'));
  const check = spawnSync('promtool', ['check', 'config', path.join(tmp, 'prometheus.yml')], { encoding: 'utf8' });
  assert.equal(check.status, 0, check.stdout + check.stderr);
  // Grafana reads the compose Prometheus and the mounted dashboard.
  const datasource = YAML.parse(fs.readFileSync(path.join(dir, 'grafana/provisioning/datasources/prometheus.yml'), 'utf8'));
  assert.equal(datasource.datasources[0].url, `http://prometheus:${compose.services.prometheus.ports[0].split(':')[1]}`);
  const provider = YAML.parse(fs.readFileSync(path.join(dir, 'grafana/provisioning/dashboards/tandem.yml'), 'utf8'));
  const dashboardMount = compose.services.grafana.volumes.find((v) => v.includes('tandem-dashboard.json')).split(':')[1];
  assert.equal(path.dirname(dashboardMount), provider.providers[0].options.path);
  // The GPU overlay reserves one NVIDIA GPU.
  const gpu = YAML.parse(fs.readFileSync(path.join(dir, 'docker-compose.gpu.yml'), 'utf8'));
  assert.deepEqual(gpu.services.tandem.deploy.resources.reservations.devices[0],
    { driver: 'nvidia', count: 1, capabilities: ['gpu'] });
});

// ---- The Gateway API Inference Extension example (deploy/k8s/inference) ----

// Every object of the inference kustomization (files may hold several).
async function loadInference() {
  const YAML = await import('yaml');
  const kustomization = YAML.parse(fs.readFileSync(path.join(INFERENCE, 'kustomization.yaml'), 'utf8'));
  const docs = [];
  for (const file of kustomization.resources) {
    for (const d of YAML.parseAllDocuments(fs.readFileSync(path.join(INFERENCE, file), 'utf8'))) {
      assert.deepEqual(d.errors, [], file);
      docs.push({ file, doc: d.toJS() });
    }
  }
  const one = (kind) => {
    const found = docs.filter((d) => d.doc.kind === kind);
    assert.equal(found.length, 1, `one ${kind}`);
    return found[0].doc;
  };
  return { YAML, docs, one };
}

// The InferencePool's OpenAPI schema: spec of inference.networking.k8s.io/v1
// from kubernetes-sigs/gateway-api-inference-extension v1.5.0,
// config/crd/bases/inference.networking.k8s.io_inferencepools.yaml, without
// descriptions and status. Two changes: additionalProperties: false on the
// objects (the API server prunes unknown fields silently; here a misspelt
// field fails), and the CRD's two CEL rules are checked in inferencePoolErrors.
const portNumber = { type: 'integer', format: 'int32', minimum: 1, maximum: 65535 };
const INFERENCE_POOL_SCHEMA = {
  type: 'object',
  required: ['apiVersion', 'kind', 'metadata', 'spec'],
  properties: {
    apiVersion: { const: 'inference.networking.k8s.io/v1' },
    kind: { const: 'InferencePool' },
    metadata: { type: 'object', required: ['name'] },
    spec: {
      type: 'object',
      additionalProperties: false,
      required: ['endpointPickerRef', 'selector', 'targetPorts'],
      properties: {
        appProtocol: { type: 'string', enum: ['http', 'kubernetes.io/h2c'], default: 'http' },
        endpointPickerRef: {
          type: 'object',
          additionalProperties: false,
          required: ['name'],
          properties: {
            failureMode: { type: 'string', enum: ['FailOpen', 'FailClose'], default: 'FailClose' },
            group: {
              type: 'string', default: '', minLength: 0, maxLength: 253,
              pattern: '^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
            },
            kind: { type: 'string', default: 'Service', minLength: 1, maxLength: 63, pattern: '^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$' },
            name: { type: 'string', minLength: 1, maxLength: 253 },
            port: { type: 'object', additionalProperties: false, required: ['number'], properties: { number: portNumber } },
          },
        },
        selector: {
          type: 'object',
          additionalProperties: false,
          required: ['matchLabels'],
          properties: {
            matchLabels: {
              type: 'object', minProperties: 1, maxProperties: 64,
              additionalProperties: {
                type: 'string', minLength: 0, maxLength: 63, pattern: '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$',
              },
            },
          },
        },
        targetPorts: {
          type: 'array', minItems: 1, maxItems: 8,
          items: { type: 'object', additionalProperties: false, required: ['number'], properties: { number: portNumber } },
        },
      },
    },
  },
};

let validateInferencePool;
// The schema's errors plus its CEL rules ("port number must be unique";
// "port is required when kind is 'Service' or unspecified").
function inferencePoolErrors(pool) {
  if (!validateInferencePool) {
    // ajv is what @kubernetes-models/validate validates with.
    const requireFromValidate = createRequire(path.join(__dirname, 'node_modules/@kubernetes-models/validate/index.js'));
    const Ajv = requireFromValidate('ajv');
    const ajv = new Ajv({ allErrors: true, strict: false });
    ajv.addFormat('int32', { type: 'number', validate: (n) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
    validateInferencePool = ajv.compile(INFERENCE_POOL_SCHEMA);
  }
  const errors = validateInferencePool(pool) ? [] : validateInferencePool.errors.map((e) => `${e.instancePath} ${e.message}`);
  const ports = (pool.spec?.targetPorts || []).map((p) => p.number);
  if (new Set(ports).size !== ports.length) errors.push('/spec/targetPorts port number must be unique');
  const ref = pool.spec?.endpointPickerRef || {};
  if ((ref.kind ?? 'Service') === 'Service' && !ref.port) errors.push('/spec/endpointPickerRef port is required when kind is Service');
  return errors;
}

test('the inference example validates against its API schemas, and the checks can fail', async () => {
  const { docs, one } = await loadInference();
  assert.deepEqual(docs.map((d) => d.doc.kind).sort(), ['ConfigMap', 'Deployment', 'Gateway', 'HTTPRoute',
    'InferencePool', 'Role', 'RoleBinding', 'Service', 'ServiceAccount']);
  for (const { file, doc } of docs) {
    if (doc.kind === 'InferencePool') continue;
    const Model = await modelClass(doc.apiVersion, doc.kind);
    assert.doesNotThrow(() => new Model(doc).validate(), `${file}: ${doc.kind}`);
  }
  const pool = one('InferencePool');
  assert.deepEqual(inferencePoolErrors(pool), []);
  // The vendored schema and rules reject what the API server would.
  const broken = (change) => { const p = structuredClone(pool); change(p.spec); return inferencePoolErrors(p); };
  assert.notDeepEqual(broken((s) => { s.targetPorts = []; }), []);
  assert.notDeepEqual(broken((s) => { s.targetPorts.push({ number: s.targetPorts[0].number }); }), []);
  assert.notDeepEqual(broken((s) => { s.endpointPickerRef.failureMode = 'Open'; }), []);
  assert.notDeepEqual(broken((s) => { delete s.endpointPickerRef.port; }), []);
  assert.notDeepEqual(broken((s) => { s.targetPort = s.targetPorts; delete s.targetPorts; }), []);
  const route = structuredClone(one('HTTPRoute'));
  route.spec.rules[0].backendRefs[0].weight = -1;
  const HTTPRoute = await modelClass('gateway.networking.k8s.io/v1', 'HTTPRoute');
  assert.throws(() => new HTTPRoute(route).validate(), /weight/);
});

test('the InferencePool selects the Tandem pods on their HTTP port; gateway, route and picker fit together', async () => {
  const { docs: base } = await load();
  const { one } = await loadInference();
  const tandem = base.find((d) => d.doc.kind === 'Deployment').doc;
  const pool = one('InferencePool');
  // The pool's members are the Tandem pods, and only those.
  const tandemLabels = tandem.spec.template.metadata.labels;
  for (const [k, v] of Object.entries(pool.spec.selector.matchLabels)) assert.equal(tandemLabels[k], v, `pool selects ${k}=${v}`);
  const epp = one('Deployment');
  const eppLabels = epp.spec.template.metadata.labels;
  assert.ok(Object.entries(pool.spec.selector.matchLabels).some(([k, v]) => eppLabels[k] !== v), 'the EPP is not in the pool');
  // The target port is the server's HTTP port (the OpenAI API and /metrics).
  const [c] = tandem.spec.template.spec.containers;
  const httpPort = c.ports.find((p) => p.name === 'http').containerPort;
  assert.deepEqual(pool.spec.targetPorts, [{ number: httpPort }]);
  assert.equal(Number(c.args.find((a) => a.startsWith('--metrics_listen=')).split(':').pop()), httpPort);
  assert.equal(pool.spec.appProtocol, 'http');
  // The pool names the EPP's Service; the Service reaches the EPP's ext_proc port.
  const service = one('Service');
  const eppContainer = epp.spec.template.spec.containers.find((x) => x.name === 'epp');
  assert.equal(pool.spec.endpointPickerRef.name, service.metadata.name);
  assert.ok(['', undefined].includes(pool.spec.endpointPickerRef.group) && ['Service', undefined].includes(pool.spec.endpointPickerRef.kind));
  const extProc = service.spec.ports.find((p) => p.port === pool.spec.endpointPickerRef.port.number);
  assert.ok(extProc, 'the Service exposes the endpointPickerRef port');
  const target = eppContainer.ports.find((p) => p.name === extProc.targetPort || p.containerPort === extProc.targetPort);
  assert.equal(target.containerPort, 9002, 'ext_proc: the EPP\'s --grpc-port default');
  for (const [k, v] of Object.entries(service.spec.selector)) assert.equal(eppLabels[k], v);
  for (const [k, v] of Object.entries(epp.spec.selector.matchLabels)) assert.equal(eppLabels[k], v);
  // The EPP: pinned release image, its flags name this pool and a mounted config file.
  assert.match(eppContainer.image, /^registry\.k8s\.io\/gateway-api-inference-extension\/epp:v\d+\.\d+\.\d+$/);
  const flag = (name) => eppContainer.args.find((a) => a.startsWith(`--${name}=`))?.split('=').slice(1).join('=');
  assert.equal(flag('pool-name'), pool.metadata.name);
  assert.equal(flag('pool-group'), pool.apiVersion.split('/')[0]);
  const configFile = flag('config-file');
  const mount = eppContainer.volumeMounts.find((m) => configFile.startsWith(`${m.mountPath}/`));
  const volume = epp.spec.template.spec.volumes.find((v) => v.name === mount.name);
  const configMap = one('ConfigMap');
  assert.equal(volume.configMap.name, configMap.metadata.name);
  assert.ok(configMap.data[path.posix.relative(mount.mountPath, configFile)], `${configFile} is in the ConfigMap`);
  // v1.4.0 and later exit at start when a metric flag is given.
  for (const old of ['total-queued-requests-metric', 'total-running-requests-metric', 'kv-cache-usage-percentage-metric',
    'lora-info-metric', 'cache-info-metric']) {
    assert.ok(!eppContainer.args.some((a) => a.startsWith(`--${old}`)), `--${old} is refused by the EPP v1.4+`);
  }
  assert.ok(eppContainer.env.some((e) => e.name === 'NAMESPACE' && e.valueFrom.fieldRef.fieldPath === 'metadata.namespace'),
    'the EPP finds the pool\'s namespace in $NAMESPACE');
  assert.ok(epp.spec.template.spec.terminationGracePeriodSeconds >= tandem.spec.template.spec.terminationGracePeriodSeconds);
  assert.equal(epp.spec.template.spec.securityContext.runAsNonRoot, true);
  // Its identity may watch the pods and the pool.
  const sa = one('ServiceAccount');
  const role = one('Role');
  const binding = one('RoleBinding');
  assert.equal(epp.spec.template.spec.serviceAccountName, sa.metadata.name);
  assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: sa.metadata.name }]);
  assert.deepEqual(binding.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role.metadata.name });
  const may = (group, resource) => role.rules.some((r) => r.apiGroups.includes(group) && r.resources.includes(resource)
    && ['get', 'watch', 'list'].every((v) => r.verbs.includes(v)));
  assert.ok(may('', 'pods'));
  assert.ok(may('inference.networking.k8s.io', 'inferencepools'));
  // The route hangs on the Gateway and sends to the pool.
  const gateway = one('Gateway');
  const route = one('HTTPRoute');
  assert.deepEqual(route.spec.parentRefs, [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: gateway.metadata.name }]);
  assert.deepEqual(route.spec.rules.flatMap((r) => r.backendRefs),
    [{ group: 'inference.networking.k8s.io', kind: 'InferencePool', name: pool.metadata.name }]);
});

// The gauges tandem-server registers (server/*.cc: gauge("name", ...) or
// BuildGauge().Name("name")).
function exportedGauges() {
  const dir = path.join(ROOT, 'server');
  const names = new Set();
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.cc'))) {
    const text = fs.readFileSync(path.join(dir, file), 'utf8');
    for (const m of text.matchAll(/\bgauge\(\s*"([a-z_:]+)"/g)) names.add(m[1]);
    for (const m of text.matchAll(/BuildGauge\(\)\s*\.Name\(\s*"([a-z_:]+)"/g)) names.add(m[1]);
  }
  return names;
}

// The plugin types of the EPP v1.5.0 (cmd/epp/runner/runner.go,
// registerInTreePlugins) that this configuration may use.
const EPP_PLUGIN_TYPES = new Set(['metrics-data-source', 'core-metrics-extractor', 'queue-scorer',
  'kv-cache-utilization-scorer', 'running-requests-size-scorer', 'prefix-cache-scorer', 'lora-affinity-scorer',
  'max-score-picker', 'random-picker', 'weighted-random-picker', 'single-profile-handler', 'openai-parser']);

test('the endpoint picker reads queue, running and KV-cache gauges that tandem-server exports', async () => {
  const { YAML, docs, one } = await loadInference();
  const gauges = exportedGauges();
  const configMap = one('ConfigMap');
  const [key] = Object.keys(configMap.data);
  const config = YAML.parse(configMap.data[key]);
  assert.equal(config.kind, 'EndpointPickerConfig');
  assert.equal(config.apiVersion, 'inference.networking.x-k8s.io/v1alpha1');
  const plugins = new Map(config.plugins.map((p) => [p.name || p.type, p]));
  for (const p of config.plugins) assert.ok(EPP_PLUGIN_TYPES.has(p.type), `${p.type} is a plugin of the EPP`);
  // The extractor's engine for pods without an engine label names Tandem's gauges.
  const extractor = config.plugins.find((p) => p.type === 'core-metrics-extractor').parameters;
  const engine = extractor.engineConfigs.find((e) => e.name === extractor.defaultEngine);
  assert.ok(engine, 'defaultEngine is one of the engineConfigs');
  assert.deepEqual({ queued: engine.queuedRequestsSpec, running: engine.runningRequestsSpec, kv: engine.kvUsageSpec },
    { queued: 'tandem_requests_waiting', running: 'tandem_requests_running', kv: 'tandem_kv_cache_usage_ratio' });
  for (const spec of [engine.queuedRequestsSpec, engine.runningRequestsSpec, engine.kvUsageSpec]) {
    assert.ok(gauges.has(spec), `${spec} is a gauge of tandem-server (server/*.cc)`);
  }
  assert.ok(!engine.loraSpec && !engine.cacheInfoSpec, 'no LoRA or cache-info metric: Tandem has neither');
  // Every Tandem metric named anywhere in the example (the legacy flags in comments too) is a gauge it exports.
  for (const { file } of docs) {
    for (const m of fs.readFileSync(path.join(INFERENCE, file), 'utf8').matchAll(/\btandem_[a-z_]+/g)) {
      assert.ok(gauges.has(m[0]), `${file} names ${m[0]}, a gauge of tandem-server`);
    }
  }
  // The data layer scrapes /metrics over HTTP and feeds the extractor; the
  // profile's scorers read what it extracts (no LoRA or prefix-cache scorer).
  const source = plugins.get(config.dataLayer.sources[0].pluginRef);
  assert.equal(source.type, 'metrics-data-source');
  assert.deepEqual([source.parameters.scheme, source.parameters.path], ['http', '/metrics']);
  assert.equal(plugins.get(config.dataLayer.sources[0].extractors[0].pluginRef).type, 'core-metrics-extractor');
  const [profile] = config.schedulingProfiles;
  const scorers = profile.plugins.map((ref) => { assert.ok(plugins.has(ref.pluginRef), ref.pluginRef); return plugins.get(ref.pluginRef).type; });
  assert.deepEqual(scorers.sort(), ['kv-cache-utilization-scorer', 'queue-scorer', 'running-requests-size-scorer']);
});

test('a running tandem-server exports the picker\'s gauges on its HTTP port', async () => {
  const server = await startServer(['--metrics_listen=127.0.0.1:0', '--max_slots=4']);
  try {
    const { body } = await httpGet(`http://${server.metricsAddress}/metrics`);
    for (const name of ['tandem_requests_waiting', 'tandem_requests_running', 'tandem_kv_cache_usage_ratio']) {
      assert.ok(body.includes(`# TYPE ${name} gauge\n`), `${name} is a gauge on /metrics`);
      const value = Number(body.match(new RegExp(`^${name} (\\S+)$`, 'm'))[1]);
      assert.ok(Number.isFinite(value) && value >= 0, `${name} = ${value}`);
    }
    const kv = Number(body.match(/^tandem_kv_cache_usage_ratio (\S+)$/m)[1]);
    assert.ok(kv <= 1, 'the KV usage is a fraction (the EPP expects 0..1)');
  } finally {
    server.kill('SIGTERM');
    await server.exited;
  }
});

// ---- The Dockerfile ----

// Its stages: { name, from (the ARGs of before the first FROM substituted), text }.
function dockerfileStages() {
  const text = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  const firstFrom = text.search(/^FROM\s/m);
  const args = Object.fromEntries([...text.slice(0, firstFrom).matchAll(/^ARG\s+(\w+)=(\S+)/gm)].map((m) => [m[1], m[2]]));
  const parts = text.slice(firstFrom).split(/^(?=FROM\s)/m);
  return parts.map((part) => {
    const m = part.match(/^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/i);
    const from = m[1].replace(/\$\{(\w+)\}/g, (_, name) => {
      assert.ok(name in args, `ARG ${name} has a default before the first FROM`);
      return args[name];
    });
    return { name: m[2], from, raw: m[1], text: part.replace(/\\\n/g, ' ') };
  });
}

test('the Dockerfile: cpu and cuda targets, pinned bases, COPY sources that exist', () => {
  const stages = dockerfileStages();
  const names = stages.map((s) => s.name);
  assert.ok(names.includes('cuda') && names.includes('cpu'), `targets cpu and cuda in ${names.join(', ')}`);
  assert.equal(names.at(-1), 'cpu', 'docker build without --target builds the CPU image');
  for (const [i, stage] of stages.entries()) {
    // A base is an earlier stage or an image pinned by a version tag.
    if (!names.slice(0, i).includes(stage.from)) {
      assert.match(stage.from, /^[a-z0-9./-]+:(?!latest$)[\w.-]+$/, `${stage.from} is pinned`);
      assert.ok(!stage.raw.includes('}:') || /\}:[\w.-]+$/.test(stage.raw), 'an ARG changes the repository, never the tag');
    }
    for (const m of stage.text.matchAll(/^COPY\s+(.+)$/gm)) {
      const words = m[1].trim().split(/\s+/);
      const from = words.find((w) => w.startsWith('--from='));
      const sources = words.filter((w) => !w.startsWith('--')).slice(0, -1);
      if (from) {
        assert.ok(names.slice(0, i).includes(from.slice('--from='.length)), `${from} names an earlier stage`);
      } else {
        for (const source of sources) assert.ok(fs.existsSync(path.join(ROOT, source)), `COPY ${source} exists`);
      }
    }
  }
  const stage = (name) => stages.find((s) => s.name === name);
  // The CUDA stages: NVIDIA's devel and runtime images of one CUDA version and
  // Ubuntu, and the CUDA LibTorch for that CUDA version, checked by its sha256.
  const [, devel, develOs] = stage('build-cuda').from.match(/^nvidia\/cuda:([\d.]+)-devel-(ubuntu[\d.]+)$/);
  const [, runtime, runtimeOs] = stage('cuda').from.match(/^nvidia\/cuda:([\d.]+)-runtime-(ubuntu[\d.]+)$/);
  assert.deepEqual([runtime, runtimeOs], [devel, develOs], 'the runtime image matches the devel image');
  const url = stage('build-cuda').text.match(/^ARG LIBTORCH_URL=(\S+)$/m)[1];
  const cu = `cu${devel.split('.').slice(0, 2).join('')}`;
  assert.match(url, new RegExp(`^https://download\\.pytorch\\.org/libtorch/${cu}/libtorch-[\\w-]+-2\\.\\d+\\.\\d+%2B${cu}\\.zip$`));
  assert.match(stage('build-cuda').text, /^ARG LIBTORCH_SHA256=[0-9a-f]{64}$/m);
  assert.match(stage('build-cuda').text, /sha256sum -c/);
  // Both builds make the two binaries that the runtime stages copy.
  for (const build of ['build-cpu', 'build-cuda']) {
    assert.match(stage(build).text, /-DTANDEM_BUILD_TESTS=OFF/);
    assert.match(stage(build).text, /--target tandem-server tandem-cli/);
  }
  // Compose builds the matching targets.
  const YAMLText = (f) => fs.readFileSync(path.join(DEPLOY, 'compose', f), 'utf8');
  assert.match(YAMLText('docker-compose.yml'), /^ {6}target: cpu$/m);
  assert.match(YAMLText('docker-compose.gpu.yml'), /^ {6}target: cuda$/m);
});

test('the Dockerfile: both images run non-root, with the same HEALTHCHECK, only the binaries copied', () => {
  const stages = dockerfileStages();
  const stage = (name) => stages.find((s) => s.name === name);
  const line = (s, instruction) => s.text.match(new RegExp(`^${instruction}\\s.*$`, 'gm')) || [];
  const [cpu, cuda] = [stage('cpu'), stage('cuda')];
  for (const s of [cpu, cuda]) {
    const users = line(s, 'USER');
    assert.equal(users.length, 1, `${s.name}: one USER`);
    assert.match(users[0], /^USER\s+(?!0\b|root\b)\S+$/, `${s.name} runs as a non-root user`);
    assert.ok(s.text.indexOf(users[0]) < s.text.indexOf('HEALTHCHECK'), 'USER before the run-time instructions');
    // Only the two binaries (and, for CUDA, LibTorch's libraries and the
    // list of packages) come from the build stage.
    for (const m of s.text.matchAll(/^COPY\s+--from=\S+\s+(.+)$/gm)) {
      const sources = m[1].trim().split(/\s+/).slice(0, -1);
      for (const source of sources) {
        assert.ok(['/src/build/bin/tandem-server', '/src/build/bin/tandem-cli', '/opt/libtorch/lib',
          '/out/runtime-packages.txt'].includes(source), `${s.name} copies ${source}`);
      }
    }
    assert.doesNotMatch(s.text, /build-essential|-dev\b|cmake/, `${s.name}: no build tools`);
  }
  for (const instruction of ['HEALTHCHECK', 'ENTRYPOINT', 'CMD', 'EXPOSE']) {
    assert.deepEqual(line(cuda, instruction), line(cpu, instruction), `the same ${instruction}`);
  }
  assert.match(cuda.text, /^ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility$/m);
  // The HEALTHCHECK asks the server's own port, with options Docker knows.
  const [health] = line(cpu, 'HEALTHCHECK');
  const options = health.slice('HEALTHCHECK'.length, health.indexOf(' CMD ')).trim().split(/\s+/);
  for (const o of options) assert.match(o, /^--(interval|timeout|start-period|retries)=\d+[smh]?$/, o);
  assert.ok(Number(health.match(/--start-period=(\d+)s/)[1]) >= 300, 'the start period covers model loading');
  const listen = JSON.parse(line(cpu, 'CMD')[0].slice(4)).find((a) => a.startsWith('--listen=')).split(':').pop();
  assert.match(health, new RegExp(`"/usr/local/bin/tandem-cli", "health", "--server=127\\.0\\.0\\.1:${listen}"`));
});

test('dockerfilelint accepts the Dockerfile (bar its --start-period misreading)', () => {
  const r = spawnSync(path.join(__dirname, 'node_modules/.bin/dockerfilelint'), ['-j', path.join(ROOT, 'Dockerfile')],
    { encoding: 'utf8' });
  const issues = JSON.parse(r.stdout).files[0].issues;
  // dockerfilelint 1.8 takes HEALTHCHECK's option names with /--\w+/, so it
  // reads --start-period as an unknown "--start": the previous test checks
  // those options itself. Anything else fails.
  const other = issues.filter((i) => !(i.title === 'Invalid Argument Format' && /^HEALTHCHECK .*--start-period=/.test(i.content)));
  assert.deepEqual(other, []);
  // And the linter does find problems (the check can fail).
  const bad = spawnSync(path.join(__dirname, 'node_modules/.bin/dockerfilelint'), ['-j', 'FROM debian:latest\nRUN apt-get update\n'],
    { encoding: 'utf8' });
  assert.ok(JSON.parse(bad.stdout).totalIssues >= 2, bad.stdout);
});

// The Debian packages (on this machine, Debian 12 as the CPU image) that own
// the shared libraries an ELF file needs directly.
function neededPackages(file) {
  const readelf = spawnSync('readelf', ['-d', file], { encoding: 'utf8' });
  assert.equal(readelf.status, 0, readelf.stderr);
  const sonames = [...readelf.stdout.matchAll(/\(NEEDED\)\s+Shared library: \[(.+)\]/g)].map((m) => m[1]);
  const cache = spawnSync('ldconfig', ['-p'], { encoding: 'utf8' }).stdout;
  const packages = new Map();
  for (const soname of sonames) {
    const where = cache.split('\n').find((l) => l.trim().startsWith(`${soname} (`) && l.includes('x86-64'))?.split(' => ')[1];
    assert.ok(where, `${soname} is installed here`);
    const real = fs.realpathSync(where);
    // The last two components: merged /usr makes /lib/... and /usr/lib/...
    // the same file, and lib32 packages hold files of the same name.
    const tail = path.join(path.basename(path.dirname(real)), path.basename(real));
    const owner = spawnSync('dpkg', ['-S', `*/${tail}`], { encoding: 'utf8' }).stdout.split(':')[0];
    assert.ok(owner, `a package owns ${real}`);
    packages.set(owner, soname);
  }
  return packages;
}

test('the CPU image installs what the binaries load, and little else', (t) => {
  const binaries = ['tandem-server', 'tandem-cli'].map((b) => path.join(BIN_DIR, b));
  if (!binaries.every((b) => fs.existsSync(b))) return t.skip(`no built binaries in ${BIN_DIR}`);
  const cpu = dockerfileStages().find((s) => s.name === 'cpu');
  const installed = cpu.text.match(/apt-get install -y --no-install-recommends\s+([^&]+)&&/)[1].trim().split(/\s+/);
  // What apt brings along with them (on this machine's package lists).
  const closure = spawnSync('apt-cache', ['depends', '--recurse', '--no-recommends', '--no-suggests', '--no-conflicts',
    '--no-breaks', '--no-replaces', '--no-enhances', ...installed], { encoding: 'utf8' });
  if (closure.status !== 0) return t.skip(`apt-cache has no package lists: ${closure.stderr}`);
  const brought = new Set(closure.stdout.split('\n').filter((l) => /^\S/.test(l)).map((l) => l.trim()));
  const priority = (p) => spawnSync('dpkg-query', ['-W', '-f=${Priority}', p], { encoding: 'utf8' }).stdout;
  const needed = new Map();
  for (const b of binaries) for (const [p, soname] of neededPackages(b)) needed.set(p, soname);
  for (const [p, soname] of needed) {
    assert.ok(installed.includes(p) || brought.has(p) || ['required', 'important'].includes(priority(p)),
      `${soname} (${p}) is in the CPU image`);
  }
  // Installed but loaded otherwise, or not yet: each with its reason.
  const cmake = fs.readFileSync(path.join(ROOT, 'CMakeLists.txt'), 'utf8');
  const reasons = {
    'libopenblas0-openmp': 'the BLAS behind libblas.so.3 that Debian\'s libtorch loads (deps/debian-packages.txt)',
    'ca-certificates': 'TLS roots',
    libutf8proc2: /libutf8proc/.test(cmake) && 'CMakeLists.txt links utf8proc (binaries built before that do not load it yet)',
  };
  for (const p of installed) {
    assert.ok(needed.has(p) || reasons[p], `${p} is loaded by tandem-server or tandem-cli, or has a reason`);
  }
});
