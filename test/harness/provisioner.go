package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

const (
	// ProvisionerName is the provisioner a StorageClass names to have the
	// harness's Provisioner provision its claims.
	ProvisionerName = "harness.storagebench.io/local"
	// MaxBlockSize caps the sparse file behind a Block volume's loop device.
	MaxBlockSize = 256 << 20

	// Annotations shared with kube-controller-manager's
	// persistentvolume-binder, as an external provisioner uses them.
	annStorageProvisioner     = "volume.kubernetes.io/storage-provisioner"
	annBetaStorageProvisioner = "volume.beta.kubernetes.io/storage-provisioner"
	annProvisionedBy          = "pv.kubernetes.io/provisioned-by"
	annSelectedNode           = "volume.kubernetes.io/selected-node"
)

// CapacityFunc returns the capacity of a volume provisioned for a claim that
// requests request from class, e.g. the request rounded up to the storage's
// allocation unit, so tests can check the capacity reported back.
type CapacityFunc func(class *storagev1.StorageClass, request resource.Quantity) resource.Quantity

// ProvisionerOptions configure StartProvisioner.
type ProvisionerOptions struct {
	// Name is the provisioner name classes must give; default ProvisionerName.
	Name string
	// Capacity sizes volumes; default the claim's request.
	Capacity CapacityFunc
	// WorkDir holds the volumes' directories and block files (required).
	WorkDir string
	// Logger receives the provisioner's log; default none.
	Logger logr.Logger
}

// Provisioner is an external dynamic provisioner, as a CSI provisioner
// sidecar would be. It watches claims that kube-controller-manager annotated
// with volume.kubernetes.io/storage-provisioner = its name and creates a
// hostPath PersistentVolume pre-bound to each (a directory for Filesystem, a
// loop device on a sparse file for Block); the real persistentvolume-binder
// then binds them. Released volumes with reclaim policy Delete are deleted,
// storage first. Claims of classes with other provisioners are left alone.
type Provisioner struct {
	opts   ProvisionerOptions
	client client.Client
	reader client.Reader
	mgr    *runner

	mu    sync.Mutex
	loops map[string]string // PV name -> loop device this provisioner attached
}

// StartProvisioner starts a Provisioner talking to the API server as cfg.
func StartProvisioner(cfg *rest.Config, opts ProvisionerOptions) (*Provisioner, error) {
	if opts.WorkDir == "" {
		return nil, errors.New("ProvisionerOptions.WorkDir is required")
	}
	if opts.Name == "" {
		opts.Name = ProvisionerName
	}
	if err := os.MkdirAll(opts.WorkDir, 0o755); err != nil {
		return nil, err
	}
	mgr, err := newManager(cfg, opts.Logger.WithName("provisioner"))
	if err != nil {
		return nil, err
	}
	opts.Logger = opts.Logger.WithName("provisioner")
	p := &Provisioner{opts: opts, client: mgr.GetClient(), reader: mgr.GetAPIReader(), loops: map[string]string{}}
	err = builder.ControllerManagedBy(mgr).Named("harness-provisioner-claims").
		For(&corev1.PersistentVolumeClaim{}).
		Complete(reconcile.Func(p.reconcileClaim))
	if err != nil {
		return nil, err
	}
	err = builder.ControllerManagedBy(mgr).Named("harness-provisioner-volumes").
		For(&corev1.PersistentVolume{}).
		Complete(reconcile.Func(p.reconcileVolume))
	if err != nil {
		return nil, err
	}
	if p.mgr, err = run(mgr); err != nil {
		return nil, err
	}
	return p, nil
}

// Stop stops provisioning and detaches every loop device the Provisioner
// attached. Volume objects and directories stay.
func (p *Provisioner) Stop() error {
	if p.mgr == nil {
		return nil
	}
	errs := []error{p.mgr.stop()}
	p.mgr = nil
	p.mu.Lock()
	defer p.mu.Unlock()
	for pv := range p.loops {
		errs = append(errs, p.detachLocked(pv))
	}
	return errors.Join(errs...)
}

func (p *Provisioner) reconcileClaim(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	claim := &corev1.PersistentVolumeClaim{}
	if err := p.reader.Get(ctx, req.NamespacedName, claim); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if claim.Spec.VolumeName != "" || claim.DeletionTimestamp != nil || !p.requested(claim) {
		return reconcile.Result{}, nil
	}
	class := &storagev1.StorageClass{}
	if claim.Spec.StorageClassName == nil {
		return reconcile.Result{}, nil
	}
	if err := p.reader.Get(ctx, types.NamespacedName{Name: *claim.Spec.StorageClassName}, class); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if class.Provisioner != p.opts.Name {
		return reconcile.Result{}, nil
	}
	pvName := "pvc-" + string(claim.UID)
	err := p.reader.Get(ctx, types.NamespacedName{Name: pvName}, &corev1.PersistentVolume{})
	if err == nil || !apierrors.IsNotFound(err) {
		return reconcile.Result{}, err // provisioned already, or an error
	}
	return reconcile.Result{}, p.provision(ctx, claim, class, pvName)
}

// requested reports whether kube-controller-manager handed the claim to this
// provisioner.
func (p *Provisioner) requested(claim *corev1.PersistentVolumeClaim) bool {
	name, ok := claim.Annotations[annStorageProvisioner]
	if !ok {
		name = claim.Annotations[annBetaStorageProvisioner]
	}
	return name == p.opts.Name
}

func (p *Provisioner) provision(ctx context.Context, claim *corev1.PersistentVolumeClaim, class *storagev1.StorageClass, pvName string) error {
	request := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	capacity := request.DeepCopy()
	if p.opts.Capacity != nil {
		capacity = p.opts.Capacity(class, request)
	}
	mode := corev1.PersistentVolumeFilesystem
	if claim.Spec.VolumeMode != nil {
		mode = *claim.Spec.VolumeMode
	}
	source, err := p.createStorage(pvName, mode, capacity.Value())
	if err != nil {
		return err
	}
	reclaim := corev1.PersistentVolumeReclaimDelete
	if class.ReclaimPolicy != nil {
		reclaim = *class.ReclaimPolicy
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:        pvName,
			Annotations: map[string]string{annProvisionedBy: p.opts.Name},
		},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: capacity},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: source},
			AccessModes:                   claim.Spec.AccessModes,
			VolumeMode:                    &mode,
			StorageClassName:              class.Name,
			PersistentVolumeReclaimPolicy: reclaim,
			MountOptions:                  class.MountOptions,
			ClaimRef: &corev1.ObjectReference{
				Kind:            "PersistentVolumeClaim",
				APIVersion:      "v1",
				Namespace:       claim.Namespace,
				Name:            claim.Name,
				UID:             claim.UID,
				ResourceVersion: claim.ResourceVersion,
			},
		},
	}
	if err := p.client.Create(ctx, pv); apierrors.IsAlreadyExists(err) {
		return nil
	} else if err != nil {
		return errors.Join(fmt.Errorf("creating volume %s: %w", pvName, err), p.deleteStorage(pvName))
	}
	p.opts.Logger.Info("provisioned", "claim", claim.Namespace+"/"+claim.Name, "volume", pvName, "path", source.Path, "capacity", capacity.String())
	return nil
}

func (p *Provisioner) reconcileVolume(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pv := &corev1.PersistentVolume{}
	if err := p.reader.Get(ctx, req.NamespacedName, pv); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if pv.Annotations[annProvisionedBy] != p.opts.Name || pv.Status.Phase != corev1.VolumeReleased ||
		pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete || pv.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	if err := p.deleteStorage(pv.Name); err != nil {
		return reconcile.Result{}, err
	}
	err := p.client.Delete(ctx, pv, client.Preconditions{UID: &pv.UID})
	if err == nil {
		p.opts.Logger.Info("deleted", "volume", pv.Name)
	}
	return reconcile.Result{}, client.IgnoreNotFound(err)
}

// createStorage creates a volume's directory, or its sparse file and loop
// device, and returns the hostPath source naming it.
func (p *Provisioner) createStorage(pvName string, mode corev1.PersistentVolumeMode, size int64) (*corev1.HostPathVolumeSource, error) {
	path := filepath.Join(p.opts.WorkDir, pvName)
	if mode != corev1.PersistentVolumeBlock {
		if err := os.Mkdir(path, 0o777); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, err
		}
		// Mkdir applies the umask; volumes are world-writable like fresh
		// provisioner directories, whatever user the pod runs as.
		if err := os.Chmod(path, 0o777); err != nil {
			return nil, err
		}
		return &corev1.HostPathVolumeSource{Path: path, Type: ptr.To(corev1.HostPathDirectory)}, nil
	}
	size = min(max(size, 1<<20), MaxBlockSize)
	file := path + ".img"
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		return nil, err
	}
	if err := os.Truncate(file, size); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	out, err := exec.Command("losetup", "--find", "--show", file).CombinedOutput()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("losetup %s: %w: %s", file, err, out), os.Remove(file))
	}
	dev := strings.TrimSpace(string(out))
	p.loops[pvName] = dev
	return &corev1.HostPathVolumeSource{Path: dev, Type: ptr.To(corev1.HostPathBlockDev)}, nil
}

// deleteStorage removes what createStorage made for a volume.
func (p *Provisioner) deleteStorage(pvName string) error {
	p.mu.Lock()
	err := p.detachLocked(pvName)
	p.mu.Unlock()
	path := filepath.Join(p.opts.WorkDir, pvName)
	return errors.Join(err, os.RemoveAll(path), ignoreNotExist(os.Remove(path+".img")))
}

// detachLocked detaches the volume's loop device if it still belongs to the
// volume's file.
func (p *Provisioner) detachLocked(pvName string) error {
	dev, ok := p.loops[pvName]
	if !ok {
		return nil
	}
	delete(p.loops, pvName)
	backing, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "loop/backing_file"))
	if err != nil || strings.TrimSpace(string(backing)) != filepath.Join(p.opts.WorkDir, pvName+".img") {
		return nil // detached already (and maybe reused)
	}
	if out, err := exec.Command("losetup", "--detach", dev).CombinedOutput(); err != nil {
		return fmt.Errorf("losetup --detach %s: %w: %s", dev, err, out)
	}
	return nil
}

// volumePath returns the host path behind a bound claim.
func volumePath(ctx context.Context, r client.Reader, namespace, claimName string) (string, error) {
	claim := &corev1.PersistentVolumeClaim{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: namespace, Name: claimName}, claim); err != nil {
		return "", err
	}
	if claim.Spec.VolumeName == "" {
		return "", fmt.Errorf("claim %s/%s is not bound", namespace, claimName)
	}
	pv := &corev1.PersistentVolume{}
	if err := r.Get(ctx, types.NamespacedName{Name: claim.Spec.VolumeName}, pv); err != nil {
		return "", err
	}
	return pvHostPath(pv)
}

// CSIPathAttribute is the CSI volume attribute naming the host directory
// (or device) behind a CSI volume: the harness' stand-in for a CSI node
// plugin, so tests can use PersistentVolumes shaped like a real driver's
// (Trident's, with its own volume attributes) and still run pods on them.
const CSIPathAttribute = "harness.storagebench.io/path"

// pvHostPath is the host path of a hostPath or local volume, or of a CSI
// volume carrying CSIPathAttribute.
func pvHostPath(pv *corev1.PersistentVolume) (string, error) {
	switch {
	case pv.Spec.HostPath != nil:
		return pv.Spec.HostPath.Path, nil
	case pv.Spec.Local != nil:
		return pv.Spec.Local.Path, nil
	case pv.Spec.CSI != nil && pv.Spec.CSI.VolumeAttributes[CSIPathAttribute] != "":
		return pv.Spec.CSI.VolumeAttributes[CSIPathAttribute], nil
	}
	return "", fmt.Errorf("volume %s is neither hostPath, local, nor CSI with attribute %s: the harness cannot use it", pv.Name, CSIPathAttribute)
}

func ignoreNotExist(err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}
