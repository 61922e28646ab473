package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/plan"
)

// The Kubernetes manifests (deploy/kubernetes), checked without a
// cluster: every overlay and the merge kustomization rendered with
// kustomize's Go API, every object decoded strictly into its k8s.io/api
// type, and the wiring between them asserted: CPU sizes and Guaranteed
// QoS, the Indexed Job's shards, the mock's Service and instances, the
// generated Secret, the results volume, the security context, and the
// experiment files the Job names.

const (
	kubernetesDir = "kubernetes"
	nonRootID     = 65532 // the image's USER (deploy/Dockerfile.local)
	localImage    = "loadlab:local"
	indexVar      = "JOB_COMPLETION_INDEX"
	tokenVar      = "LOADLAB_ADMIN_TOKEN"
	cpuLabel      = "loadlab/cpu"
)

var kubernetesOverlays = []struct {
	dir       string
	cpu       int64
	namespace string
}{
	{"overlays/cpu-1", 1, "loadlab-cpu-1"},
	{"overlays/cpu-2", 2, "loadlab-cpu-2"},
}

// rendered is one kustomization's output, decoded.
type rendered struct {
	dir         string
	generic     map[string]any // by kind/namespace/name, as JSON decodes it
	namespaces  []corev1.Namespace
	deployments []appsv1.Deployment
	services    []corev1.Service
	jobs        []batchv1.Job
	pvcs        []corev1.PersistentVolumeClaim
	secrets     []corev1.Secret
}

// decodeStrict decodes b into T, refusing fields T does not have, and
// checks the object's apiVersion.
func decodeStrict[T any](b []byte, apiVersion string) (T, error) {
	var v T
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return v, err
	}
	if dec.More() {
		return v, errors.New("trailing data after the object")
	}
	var tm struct {
		APIVersion string `json:"apiVersion"`
	}
	_ = json.Unmarshal(b, &tm)
	if tm.APIVersion != apiVersion {
		return v, fmt.Errorf("apiVersion %q, want %q", tm.APIVersion, apiVersion)
	}
	return v, nil
}

func decodeInto[T any](t *testing.T, id string, b []byte, apiVersion string, into *[]T) {
	t.Helper()
	v, err := decodeStrict[T](b, apiVersion)
	if err != nil {
		t.Errorf("%s: %v", id, err)
		return
	}
	*into = append(*into, v)
}

func objectID(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

// renderKustomization builds deploy/kubernetes/DIR with krusty, as
// kubectl apply -k would, and decodes every object.
func renderKustomization(t *testing.T, dir string) *rendered {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join(kubernetesDir, dir))
	if err != nil {
		t.Fatal(err)
	}
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), abs)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	r := &rendered{dir: dir, generic: map[string]any{}}
	for _, res := range m.Resources() {
		b, err := res.MarshalJSON()
		if err != nil {
			t.Fatalf("%s: %v", res.CurId(), err)
		}
		id := objectID(res.GetKind(), res.GetNamespace(), res.GetName())
		var g any
		if err := json.Unmarshal(b, &g); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if _, dup := r.generic[id]; dup {
			t.Errorf("%s: %s twice", dir, id)
		}
		r.generic[id] = g
		switch res.GetKind() {
		case "Namespace":
			decodeInto(t, id, b, "v1", &r.namespaces)
		case "Deployment":
			decodeInto(t, id, b, "apps/v1", &r.deployments)
		case "Service":
			decodeInto(t, id, b, "v1", &r.services)
		case "Job":
			decodeInto(t, id, b, "batch/v1", &r.jobs)
		case "PersistentVolumeClaim":
			decodeInto(t, id, b, "v1", &r.pvcs)
		case "Secret":
			decodeInto(t, id, b, "v1", &r.secrets)
		default:
			t.Errorf("%s: unexpected kind %s (%s)", dir, res.GetKind(), id)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return r
}

func (r *rendered) job(t *testing.T, name string) *batchv1.Job {
	t.Helper()
	for i := range r.jobs {
		if r.jobs[i].Name == name {
			return &r.jobs[i]
		}
	}
	t.Fatalf("%s: no Job %s", r.dir, name)
	return nil
}

func podContainer(t *testing.T, spec *corev1.PodSpec, name string) *corev1.Container {
	t.Helper()
	for i := range spec.Containers {
		if spec.Containers[i].Name == name {
			return &spec.Containers[i]
		}
	}
	t.Fatalf("no container %s", name)
	return nil
}

// cmdFlags reads --name=value and bare --name arguments (value "").
func cmdFlags(t *testing.T, args []string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, a := range args {
		name, ok := strings.CutPrefix(a, "--")
		if !ok {
			continue
		}
		k, v, _ := strings.Cut(name, "=")
		if _, dup := m[k]; dup {
			t.Errorf("--%s given twice", k)
		}
		m[k] = v
	}
	return m
}

func envVar(c *corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// checkVarRefs: Kubernetes substitutes $(VAR) in command and args only for
// variables of the container's own env; any other stays literal.
func checkVarRefs(t *testing.T, where string, c *corev1.Container) {
	t.Helper()
	for _, a := range append(slices.Clone(c.Command), c.Args...) {
		for _, m := range varRef.FindAllStringSubmatch(a, -1) {
			if envVar(c, m[1]) == nil {
				t.Errorf("%s: %q refers to $(%s), not in the container's env (it would stay literal)", where, a, m[1])
			}
		}
	}
}

// podQOS is the QoS class Kubernetes gives a pod (as
// k8s.io/kubernetes/pkg/apis/core/v1/helper/qos computes it, on cpu and
// memory): Guaranteed when every container has cpu and memory limits and
// the requests equal them.
func podQOS(spec *corev1.PodSpec) corev1.PodQOSClass {
	if spec.Resources != nil { // pod-level resources decide alone; none here
		return ""
	}
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	add := func(l corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
		sum := l[name]
		sum.Add(q)
		l[name] = sum
	}
	guaranteed := true
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		found := map[corev1.ResourceName]bool{}
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := c.Resources.Requests[name]; ok && q.Sign() > 0 {
				add(requests, name, q)
			}
			if q, ok := c.Resources.Limits[name]; ok && q.Sign() > 0 {
				add(limits, name, q)
				found[name] = true
			}
		}
		if !found[corev1.ResourceCPU] || !found[corev1.ResourceMemory] {
			guaranteed = false
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	for name, req := range requests {
		if lim, ok := limits[name]; !ok || lim.Cmp(req) != 0 {
			guaranteed = false
		}
	}
	if guaranteed && len(requests) == len(limits) {
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

// checkPod: every container's cpu and memory requests equal to its limits
// (Guaranteed QoS), the non-root, read-only, no-privilege security
// context on the pod and every container, the image, and /tmp on an
// emptyDir.
func checkPod(t *testing.T, where string, spec *corev1.PodSpec) {
	t.Helper()
	all := append(slices.Clone(spec.InitContainers), spec.Containers...)
	if len(spec.EphemeralContainers) > 0 {
		t.Errorf("%s: ephemeral containers", where)
	}
	for _, c := range all {
		at := where + " container " + c.Name
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			req, okReq := c.Resources.Requests[name]
			lim, okLim := c.Resources.Limits[name]
			switch {
			case !okReq || !okLim || lim.Sign() <= 0:
				t.Errorf("%s: %s request %v (%v), limit %v (%v): both are needed", at, name, req.String(), okReq, lim.String(), okLim)
			case req.Cmp(lim) != 0:
				t.Errorf("%s: %s request %s ≠ limit %s", at, name, req.String(), lim.String())
			}
		}
		if c.Image != localImage {
			t.Errorf("%s: image %q, want %q (the base's images: entry)", at, c.Image, localImage)
		}
		checkVarRefs(t, at, &c)
		sc := c.SecurityContext
		if sc == nil {
			t.Errorf("%s: no securityContext", at)
			continue
		}
		is := func(p *bool, want bool) bool { return p != nil && *p == want }
		if !is(sc.RunAsNonRoot, true) {
			t.Errorf("%s: runAsNonRoot is not true", at)
		}
		if sc.RunAsUser == nil || *sc.RunAsUser != nonRootID || sc.RunAsGroup == nil || *sc.RunAsGroup != nonRootID {
			t.Errorf("%s: runAsUser %v, runAsGroup %v, want %d", at, show(sc.RunAsUser), show(sc.RunAsGroup), nonRootID)
		}
		if !is(sc.ReadOnlyRootFilesystem, true) {
			t.Errorf("%s: readOnlyRootFilesystem is not true", at)
		}
		if !is(sc.AllowPrivilegeEscalation, false) {
			t.Errorf("%s: allowPrivilegeEscalation is not false", at)
		}
		if sc.Privileged != nil && *sc.Privileged {
			t.Errorf("%s: privileged", at)
		}
		if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
			t.Errorf("%s: capabilities %+v, want drop [ALL] and nothing added", at, sc.Capabilities)
		}
		if sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("%s: seccompProfile %+v, want RuntimeDefault", at, sc.SeccompProfile)
		}
		tmp := false
		for _, m := range c.VolumeMounts {
			if m.MountPath == "/tmp" {
				v := volume(spec, m.Name)
				tmp = v != nil && v.EmptyDir != nil
			}
		}
		if !tmp {
			t.Errorf("%s: no emptyDir at /tmp (the root filesystem is read-only)", at)
		}
	}
	if q := podQOS(spec); q != corev1.PodQOSGuaranteed {
		t.Errorf("%s: QoS class %q, want Guaranteed", where, q)
	}
	psc := spec.SecurityContext
	if psc == nil {
		t.Fatalf("%s: no pod securityContext", where)
	}
	if psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
		t.Errorf("%s: pod runAsNonRoot is not true", where)
	}
	for name, p := range map[string]*int64{"runAsUser": psc.RunAsUser, "runAsGroup": psc.RunAsGroup, "fsGroup": psc.FSGroup} {
		if p == nil || *p != nonRootID {
			t.Errorf("%s: pod %s %v, want %d", where, name, show(p), nonRootID)
		}
	}
	if psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: pod seccompProfile %+v, want RuntimeDefault", where, psc.SeccompProfile)
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Errorf("%s: automountServiceAccountToken is not false", where)
	}
	if spec.HostNetwork || spec.HostPID || spec.HostIPC {
		t.Errorf("%s: host namespaces", where)
	}
}

// show prints what a pointer field holds, or "unset".
func show[T any](p *T) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}

func volume(spec *corev1.PodSpec, name string) *corev1.Volume {
	for i := range spec.Volumes {
		if spec.Volumes[i].Name == name {
			return &spec.Volumes[i]
		}
	}
	return nil
}

// claimMount is where container c mounts the PersistentVolumeClaim claim.
func claimMount(t *testing.T, spec *corev1.PodSpec, c *corev1.Container, claim string) string {
	t.Helper()
	for _, m := range c.VolumeMounts {
		if v := volume(spec, m.Name); v != nil && v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim {
			if m.ReadOnly || m.SubPath != "" {
				t.Errorf("container %s: claim %s mounted read-only or by subPath", c.Name, claim)
			}
			return m.MountPath
		}
	}
	t.Fatalf("container %s does not mount the claim %s", c.Name, claim)
	return ""
}

// under reports whether p is inside the folder dir.
func under(p, dir string) bool {
	return path.IsAbs(p) && strings.HasPrefix(path.Clean(p), path.Clean(dir)+"/")
}

// containerPort resolves a Service's targetPort or a probe's port against
// the container's ports.
func containerPort(c *corev1.Container, p intstr.IntOrString) int32 {
	for _, cp := range c.Ports {
		if (p.Type == intstr.String && cp.Name == p.StrVal) || (p.Type == intstr.Int && cp.ContainerPort == p.IntVal) {
			return cp.ContainerPort
		}
	}
	return 0
}

func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// checkTokenEnv checks that env var tokenVar of c comes from the Secret s and
// that --admin-token passes it; it returns the key.
func checkTokenEnv(t *testing.T, where string, c *corev1.Container, s *corev1.Secret, flags map[string]string) {
	t.Helper()
	if got := flags["admin-token"]; got != "$("+tokenVar+")" {
		t.Errorf("%s: --admin-token=%q, want $(%s)", where, got, tokenVar)
	}
	e := envVar(c, tokenVar)
	if e == nil || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
		t.Errorf("%s: %s is not from a Secret", where, tokenVar)
		return
	}
	ref := e.ValueFrom.SecretKeyRef
	if ref.Name != s.Name {
		t.Errorf("%s: %s from Secret %q, the generated one is %q", where, tokenVar, ref.Name, s.Name)
	}
	if v, ok := s.Data[ref.Key]; !ok || len(v) == 0 {
		t.Errorf("%s: Secret %s has no key %q", where, s.Name, ref.Key)
	}
	if ref.Optional != nil && *ref.Optional {
		t.Errorf("%s: the token's secretKeyRef is optional", where)
	}
}

// experimentFile is the repository's copy of a file the image holds under
// /experiments (deploy/Dockerfile.local copies experiments/*.yaml and
// *.lock there).
func experimentFile(t *testing.T, flag, p string) string {
	t.Helper()
	dir, base := path.Split(p)
	if dir != "/experiments/" {
		t.Fatalf("--%s=%s is not in the image's /experiments", flag, p)
	}
	if ok, _ := filepath.Match("*.yaml", base); !ok {
		t.Fatalf("--%s=%s: the image copies only experiments/*.yaml (and *.lock)", flag, p)
	}
	local := filepath.Join("..", "experiments", base)
	if _, err := os.Stat(local); err != nil {
		t.Fatalf("--%s=%s: %v", flag, p, err)
	}
	return local
}

func TestKubernetesOverlays(t *testing.T) {
	t.Parallel()
	for _, o := range kubernetesOverlays {
		t.Run(strings.ReplaceAll(o.dir, "/", "_"), func(t *testing.T) {
			t.Parallel()
			checkOverlay(t, renderKustomization(t, o.dir), o.cpu, o.namespace)
		})
	}
}

func checkOverlay(t *testing.T, r *rendered, cpu int64, namespace string) {
	// One of each, in a namespace of the overlay's own.
	if len(r.namespaces) != 1 || len(r.deployments) != 1 || len(r.services) != 1 || len(r.jobs) != 1 ||
		len(r.pvcs) != 1 || len(r.secrets) != 1 {
		t.Fatalf("%s: %d Namespaces, %d Deployments, %d Services, %d Jobs, %d PVCs, %d Secrets; want one of each",
			r.dir, len(r.namespaces), len(r.deployments), len(r.services), len(r.jobs), len(r.pvcs), len(r.secrets))
	}
	if r.namespaces[0].Name != namespace {
		t.Errorf("Namespace %q, want %q", r.namespaces[0].Name, namespace)
	}
	for id := range r.generic {
		if kind, _, _ := strings.Cut(id, "/"); kind != "Namespace" && !strings.HasPrefix(id, kind+"/"+namespace+"/") {
			t.Errorf("%s is not in the namespace %s", id, namespace)
		}
	}
	dep, svc, job, pvc, secret := &r.deployments[0], &r.services[0], &r.jobs[0], &r.pvcs[0], &r.secrets[0]

	// The generated Secret: kustomize's hash suffix on its name.
	if rest, ok := strings.CutPrefix(secret.Name, "loadlab-admin-"); !ok || rest == "" {
		t.Errorf("Secret %q is not loadlab-admin-HASH (secretGenerator)", secret.Name)
	}

	// The mock service.
	mockSpec := &dep.Spec.Template.Spec
	checkPod(t, "Deployment "+dep.Name, mockSpec)
	if len(mockSpec.Containers) != 1 {
		t.Fatalf("Deployment %s: %d containers, want 1", dep.Name, len(mockSpec.Containers))
	}
	mock := &mockSpec.Containers[0]
	if !slices.Equal(mock.Command, []string{"/mockservice"}) {
		t.Errorf("mock command %q, want [/mockservice]", mock.Command)
	}
	mockFlags := cmdFlags(t, mock.Args)
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 1 {
		t.Errorf("Deployment %s: replicas %v, want 1 (the instances' state is in one process)", dep.Name, show(dep.Spec.Replicas))
	}
	if dep.Spec.Selector == nil || !selects(dep.Spec.Selector.MatchLabels, dep.Spec.Template.Labels) || len(dep.Spec.Selector.MatchExpressions) > 0 {
		t.Errorf("Deployment %s: selector %+v does not select its pods' labels %v", dep.Name, dep.Spec.Selector, dep.Spec.Template.Labels)
	}
	host, listenPort, err := net.SplitHostPort(mockFlags["listen"])
	if err != nil || host != "0.0.0.0" {
		t.Errorf("mock --listen=%q, want 0.0.0.0:PORT (%v)", mockFlags["listen"], err)
	}
	checkTokenEnv(t, "mock", mock, secret, mockFlags)
	p := mock.ReadinessProbe
	if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" {
		t.Errorf("mock readinessProbe %+v, want GET /healthz", p)
	} else if got := containerPort(mock, p.HTTPGet.Port); strconv.Itoa(int(got)) != listenPort {
		t.Errorf("mock readinessProbe on port %d, the mock listens on %s", got, listenPort)
	}
	instances, err := strconv.Atoi(mockFlags["instances"])
	if err != nil {
		t.Errorf("mock --instances=%q: %v", mockFlags["instances"], err)
	}

	// The Service in front of it.
	if !selects(svc.Spec.Selector, dep.Spec.Template.Labels) {
		t.Errorf("Service %s selects %v, not the mock pods (%v)", svc.Name, svc.Spec.Selector, dep.Spec.Template.Labels)
	}
	if selects(svc.Spec.Selector, job.Spec.Template.Labels) {
		t.Errorf("Service %s selects the experiment's pods too", svc.Name)
	}

	// The experiment's Indexed Job.
	spec := &job.Spec.Template.Spec
	checkPod(t, "Job "+job.Name, spec)
	if job.Name != "loadlab-experiment" || len(spec.Containers) != 1 {
		t.Fatalf("Job %s with %d containers, want loadlab-experiment with 1", job.Name, len(spec.Containers))
	}
	c := &spec.Containers[0]
	if !slices.Equal(c.Command, []string{"/loadlab"}) || len(c.Args) == 0 || c.Args[0] != "experiment" {
		t.Fatalf("experiment: command %q args %q, want /loadlab experiment …", c.Command, c.Args)
	}
	flags := cmdFlags(t, c.Args[1:])
	if got := c.Resources.Limits[corev1.ResourceCPU]; got.Cmp(*resource.NewQuantity(cpu, resource.DecimalSI)) != 0 {
		t.Errorf("experiment cpu limit %s, want %d", got.String(), cpu)
	}
	want := strconv.FormatInt(cpu, 10)
	if job.Labels[cpuLabel] != want || job.Spec.Template.Labels[cpuLabel] != want {
		t.Errorf("Job labels %v, pod labels %v: want %s=%s on both", job.Labels, job.Spec.Template.Labels, cpuLabel, want)
	}

	if job.Spec.CompletionMode == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("completionMode %v, want Indexed", job.Spec.CompletionMode)
	}
	shard := flags["shard"]
	idx, nText, ok := strings.Cut(shard, "/")
	n, err := strconv.Atoi(nText)
	if !ok || idx != "$("+indexVar+")" || err != nil {
		t.Fatalf("--shard=%q, want $(%s)/N", shard, indexVar)
	}
	if job.Spec.Completions == nil || job.Spec.Parallelism == nil || int(*job.Spec.Completions) != n || int(*job.Spec.Parallelism) != n {
		t.Errorf("completions %v, parallelism %v; --shard has %d shards: all three must be equal", show(job.Spec.Completions), show(job.Spec.Parallelism), n)
	}
	for i := range n { // what each pod's substituted flag parses to
		if sh, err := plan.ParseShard(strings.ReplaceAll(shard, "$("+indexVar+")", strconv.Itoa(i))); err != nil || sh.Index != i || sh.Count != n {
			t.Errorf("index %d: --shard %v, %v", i, sh, err)
		}
	}
	if instances < n {
		t.Errorf("mock --instances=%d < %d shards", instances, n)
	}
	if job.Spec.BackoffLimitPerIndex == nil || *job.Spec.BackoffLimitPerIndex != 0 {
		t.Errorf("backoffLimitPerIndex %v, want 0", show(job.Spec.BackoffLimitPerIndex))
	}
	if spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %q, want Never", spec.RestartPolicy)
	}
	if job.Spec.TTLSecondsAfterFinished != nil {
		t.Errorf("ttlSecondsAfterFinished %d: the pods' logs must stay for collection", *job.Spec.TTLSecondsAfterFinished)
	}
	if job.Spec.ManualSelector != nil && *job.Spec.ManualSelector {
		t.Errorf("manualSelector set")
	}
	e := envVar(c, indexVar)
	if e == nil || e.Value != "" || e.ValueFrom == nil || e.ValueFrom.FieldRef == nil ||
		e.ValueFrom.FieldRef.FieldPath != "metadata.annotations['"+batchv1.JobCompletionIndexAnnotation+"']" {
		t.Errorf("env %s %+v, want it from the annotation %s", indexVar, e, batchv1.JobCompletionIndexAnnotation)
	}

	// --target: the Service's name and port, this index's instance.
	u, err := url.Parse(flags["target"])
	if err != nil {
		t.Fatalf("--target: %v", err)
	}
	if u.Scheme != "http" || u.Hostname() != svc.Name || u.RawQuery != "" || u.Path != "/i/$("+indexVar+")" {
		t.Errorf("--target=%s, want http://%s:PORT/i/$(%s)", flags["target"], svc.Name, indexVar)
	}
	var svcPort *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if strconv.Itoa(int(svc.Spec.Ports[i].Port)) == u.Port() {
			svcPort = &svc.Spec.Ports[i]
		}
	}
	if svcPort == nil {
		t.Errorf("--target port %q is not a port of Service %s (%+v)", u.Port(), svc.Name, svc.Spec.Ports)
	} else if got := containerPort(mock, svcPort.TargetPort); strconv.Itoa(int(got)) != listenPort {
		t.Errorf("Service port %d → container port %d; the mock listens on %s", svcPort.Port, got, listenPort)
	}

	checkTokenEnv(t, "experiment", c, secret, flags)
	if flags["time-scale"] == "" || flags["time-scale"] != mockFlags["time-scale"] {
		t.Errorf("experiment --time-scale=%q, mock --time-scale=%q: the runner refuses a mock at another scale", flags["time-scale"], mockFlags["time-scale"])
	}
	if _, ok := flags["json-lines"]; !ok {
		t.Errorf("no --json-lines: the pods' logs would not carry the results")
	}
	if flags["wait"] == "" {
		t.Errorf("no --wait: the mock pod may start after the experiment's")
	}

	// --out: on the results volume, one folder per index.
	if !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteMany) {
		t.Errorf("PVC %s access modes %v: the shards' pods may run on different nodes", pvc.Name, pvc.Spec.AccessModes)
	}
	mount := claimMount(t, spec, c, pvc.Name)
	out := flags["out"]
	if !under(out, mount) || !strings.Contains(out, "$("+indexVar+")") {
		t.Errorf("--out=%s, want a folder under the results volume at %s named by $(%s)", out, mount, indexVar)
	}

	// The files the image holds: a valid experiment, shardable n ways, its
	// CPU setting inherited (the pod's limit is what is measured), and
	// hypotheses that match it and their lock.
	file := experimentFile(t, "file", flags["file"])
	hyp := experimentFile(t, "hypotheses", flags["hypotheses"])
	s, err := design.LoadSpec(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, cs := range s.CPUs {
		if !cs.Inherit {
			t.Errorf("%s: CPU setting %s is not inherited: the runner would impose it inside the pod's limit", file, cs.Name)
		}
	}
	if err := plan.CheckShardable(s, plan.Shard{Index: 0, Count: n}); err != nil {
		t.Errorf("%s: %v", file, err)
	}
	if _, err := design.LoadHypotheses(hyp, s); err != nil {
		t.Error(err)
	}
	if ok, _ := filepath.Match("*.lock", filepath.Base(design.LockPath(hyp))); !ok {
		t.Errorf("lock %s is not copied into the image (*.lock)", design.LockPath(hyp))
	}
	if _, err := design.CheckLock(hyp); err != nil {
		t.Error(err)
	}
}

// The merge Job reads the folder the experiment's shards write into, on
// the same claim, in the namespace it is applied to.
func TestKubernetesMerge(t *testing.T) {
	t.Parallel()
	r := renderKustomization(t, "merge")
	if len(r.jobs) != 1 || len(r.generic) != 1 {
		t.Fatalf("merge: %d objects, want the merge Job alone", len(r.generic))
	}
	job := &r.jobs[0]
	if job.Namespace != "" {
		t.Errorf("merge Job in namespace %q: it must take the overlay's (kubectl apply -k … -n NAMESPACE)", job.Namespace)
	}
	spec := &job.Spec.Template.Spec
	checkPod(t, "Job "+job.Name, spec)
	if spec.RestartPolicy != corev1.RestartPolicyNever || job.Spec.BackoffLimit == nil || *job.Spec.BackoffLimit != 0 {
		t.Errorf("merge Job: restartPolicy %q, backoffLimit %v; want Never and 0", spec.RestartPolicy, show(job.Spec.BackoffLimit))
	}
	if job.Spec.TTLSecondsAfterFinished != nil {
		t.Errorf("merge Job: ttlSecondsAfterFinished set: its log must stay")
	}
	if len(spec.Containers) != 1 {
		t.Fatalf("merge Job: %d containers", len(spec.Containers))
	}
	c := &spec.Containers[0]
	a := c.Args
	if !slices.Equal(c.Command, []string{"/loadlab"}) || len(a) != 4 || a[0] != "merge" || a[1] != "--out" {
		t.Fatalf("merge: command %q args %q, want /loadlab merge --out DIR SHARDS", c.Command, a)
	}
	mergedDir, shardsDir := a[2], a[3]

	for _, o := range kubernetesOverlays {
		ov := renderKustomization(t, o.dir)
		pvc := ov.pvcs[0].Name
		mount := claimMount(t, spec, c, pvc)
		ej := ov.job(t, "loadlab-experiment")
		ec := podContainer(t, &ej.Spec.Template.Spec, "experiment")
		emount := claimMount(t, &ej.Spec.Template.Spec, ec, pvc)
		// Where a shard's folder is, seen from the merge pod.
		shardOut, ok := strings.CutPrefix(cmdFlags(t, ec.Args[1:])["out"], emount)
		if !ok {
			t.Fatalf("%s: --out is not on the claim", o.dir)
		}
		if got := path.Dir(path.Join(mount, shardOut)); got != path.Clean(shardsDir) {
			t.Errorf("%s: the shards write into %s; merge reads %s", o.dir, got, shardsDir)
		}
		if !under(mergedDir, mount) || under(mergedDir, shardsDir) || path.Clean(mergedDir) == path.Clean(shardsDir) {
			t.Errorf("merge --out %s: want a folder on the claim beside %s", mergedDir, shardsDir)
		}
	}
}

// kubectl's own kustomize renders the same objects (the users' tool).
func TestKubernetesKubectl(t *testing.T) {
	t.Parallel()
	dirs := []string{"merge"}
	for _, o := range kubernetesOverlays {
		dirs = append(dirs, o.dir)
	}
	for _, dir := range dirs {
		t.Run(strings.ReplaceAll(dir, "/", "_"), func(t *testing.T) {
			t.Parallel()
			kubectl, err := exec.LookPath("kubectl")
			if err != nil {
				if os.Getenv("CI") != "" {
					t.Fatalf("kubectl is not on the PATH under CI (the machine's image ships it): %v", err)
				}
				t.Skipf("kubectl kustomize not compared: %v", err)
			}
			want := renderKustomization(t, dir).generic
			out, err := exec.Command(kubectl, "kustomize", filepath.Join(kubernetesDir, dir)).Output()
			if err != nil {
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, ee.Stderr)
				}
				t.Fatal(err)
			}
			got := map[string]any{}
			dec := yaml.NewDecoder(bytes.NewReader(out))
			for {
				var doc any
				if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
					break
				} else if err != nil {
					t.Fatalf("kubectl kustomize %s: %v", dir, err)
				}
				// As JSON decodes it, to compare with the Go API's.
				b, err := json.Marshal(doc)
				if err != nil {
					t.Fatal(err)
				}
				var g struct {
					Kind     string `json:"kind"`
					Metadata struct {
						Name      string `json:"name"`
						Namespace string `json:"namespace"`
					} `json:"metadata"`
				}
				var generic any
				if err := json.Unmarshal(b, &g); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(b, &generic); err != nil {
					t.Fatal(err)
				}
				got[objectID(g.Kind, g.Metadata.Namespace, g.Metadata.Name)] = generic
			}
			for id, w := range want {
				if g, ok := got[id]; !ok {
					t.Errorf("kubectl kustomize %s: no %s", dir, id)
				} else if !reflect.DeepEqual(g, w) {
					gb, _ := json.MarshalIndent(g, "", " ")
					wb, _ := json.MarshalIndent(w, "", " ")
					t.Errorf("kubectl kustomize %s: %s differs:\n%s\nthe Go API's:\n%s", dir, id, gb, wb)
				}
			}
			for id := range got {
				if _, ok := want[id]; !ok {
					t.Errorf("kubectl kustomize %s: %s, not rendered by the Go API", dir, id)
				}
			}
		})
	}
}
