// The deployment files, checked offline: yamllint on every YAML under
// deploy/, the Kubernetes manifests against the API schemas
// (kubernetes-models, with the Prometheus Operator and KEDA types), the
// PrometheusRule against deploy/prometheus/tandem-rules.yml and promtool,
// and the Deployment's flags, probes, drain and security settings against
// tandem-server itself.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { BIN_DIR } = require('./tandem_client');

const DEPLOY = path.join(__dirname, '../../deploy');
const K8S = path.join(DEPLOY, 'k8s');

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

test('the Dockerfile pins its base images and copies only what exists', () => {
  const text = fs.readFileSync(path.join(__dirname, '../../Dockerfile'), 'utf8');
  const froms = [...text.matchAll(/^FROM\s+(\S+)/gm)].map((m) => m[1]);
  assert.ok(froms.length >= 2, 'a build stage and a runtime stage');
  for (const image of froms) assert.match(image, /^[^:]+:(?!latest$)[\w.-]+$/, `${image} is pinned`);
  // The runtime stage runs as a non-root user and has a health check.
  const runtime = text.slice(text.lastIndexOf('\nFROM '));
  assert.match(runtime, /^USER\s+(?!0\b|root\b)\S+/m, 'a non-root user');
  assert.match(runtime, /^HEALTHCHECK\s.*\bCMD\b/ms, 'a health check');
  for (const m of text.matchAll(/^COPY\s+(?!--from)(.+)$/gm)) {
    const sources = m[1].trim().split(/\s+/).slice(0, -1);
    for (const source of sources) {
      assert.ok(fs.existsSync(path.join(__dirname, '../..', source)), `COPY ${source} exists`);
    }
  }
});
