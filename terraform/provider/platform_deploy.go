package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	consulapi "github.com/hashicorp/consul/api"
	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/harvest-platform/harvest/jobs"
)

type (
	planGetter  func(context.Context, any) diag.Diagnostics
	stateSetter interface {
		Set(context.Context, any) diag.Diagnostics
	}
	diagnostics = diag.Diagnostics
)

// The Nomad variables the jobs read their credentials from.
const (
	storageVarPath = "nomad/jobs/harvest-storage"
	blobVarPath    = "nomad/jobs/harvest-blob"
	placerVarPath  = "nomad/jobs/harvest-placer"
)

// deployer brings the platform jobs up and down through Nomad's API and
// judges their health by Consul's. Its Nomad client works in the
// platform's namespace.
type deployer struct {
	nomad     *nomadapi.Client
	consul    *consulapi.Client
	namespace string
	poll      time.Duration
	settle    time.Duration
}

func (r *platformResource) deployer(m platformModel) (*deployer, error) {
	if r.c == nil {
		return nil, errors.New("the provider is not configured")
	}
	ns := m.Namespace.ValueString()
	if ns == "" {
		ns = "default"
	}
	conn := r.c.nomadConn
	conn.Namespace = ns
	n, err := conn.Client()
	if err != nil {
		return nil, err
	}
	c, err := r.c.consul()
	if err != nil {
		return nil, err
	}
	return &deployer{nomad: n, consul: c, namespace: ns, poll: time.Second, settle: settle}, nil
}

// deploy writes the variables, then registers each job in order and waits
// for it to be healthy before the next (the front lists the storage nodes
// when it starts).
func (d *deployer) deploy(ctx context.Context, m *platformModel, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := d.ensureNamespace(ctx); err != nil {
		return err
	}
	if err := d.applyACL(ctx, m); err != nil { // platform_acl.go
		return err
	}
	nodes, err := storageCredentials(ctx, d.nomad, m.StorageAccessKey.ValueString(), m.StorageSecretKey.ValueString())
	if err != nil {
		return err
	}
	vars := map[string]map[string]string{
		storageVarPath: {"access_key": m.StorageAccessKey.ValueString()},
		// the storage secret the node keys derive from: the front's alone
		blobVarPath: {"access_key": m.BlobAccessKey.ValueString(), "secret_key": m.BlobSecretKey.ValueString(),
			"storage_secret_key": m.StorageSecretKey.ValueString()},
		placerVarPath: {"api_token": m.PlacerToken.ValueString()},
	}
	for k, v := range nodes { // each storage node's own keys, for it and for the front
		vars[storageVarPath][k], vars[blobVarPath][k] = v, v
	}
	if t := m.BlobAdminToken.ValueString(); t != "" { // an empty item is left out: the front then refuses admin POSTs
		vars[blobVarPath]["admin_token"] = t
	}
	for path, items := range vars {
		if _, _, err := d.nomad.Variables().Create(&nomadapi.Variable{Path: path, Items: items}, (&nomadapi.WriteOptions{}).WithContext(ctx)); err != nil {
			return fmt.Errorf("writing Nomad variable %s: %w", path, err)
		}
	}
	for _, name := range jobs.PlatformOrder {
		src, err := jobSource(name)
		if err != nil {
			return err
		}
		vf := string(varFile(name, m))
		job, err := d.nomad.Jobs().ParseHCLOpts(&nomadapi.JobsParseRequest{JobHCL: src, Variables: vf, Canonicalize: true})
		if err != nil {
			return fmt.Errorf("%s: parsing with its variables: %w", name, err)
		}
		_, _, err = d.nomad.Jobs().RegisterOpts(job, &nomadapi.RegisterOptions{
			Submission: &nomadapi.JobSubmission{Source: src, Format: "hcl2", Variables: vf},
		}, (&nomadapi.WriteOptions{}).WithContext(ctx))
		if err != nil {
			return fmt.Errorf("%s: registering: %w", name, err)
		}
		if err := d.waitHealthy(ctx, name); err != nil {
			return err
		}
	}
	return nil
}

// read fills the model from Nomad: the jobs' submitted variables and the
// credentials in the Nomad variables. A job missing or stopped means the
// platform is gone (false).
func (d *deployer) read(m *platformModel) (bool, error) {
	for _, name := range jobs.PlatformOrder {
		job, _, err := d.nomad.Jobs().Info(name, nil)
		if isNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("%s: %w", name, err)
		}
		if job.Stop != nil && *job.Stop {
			return false, nil
		}
		sub, _, err := d.nomad.Jobs().Submission(name, int(*job.Version), nil)
		if err != nil && !isNotFound(err) {
			return false, fmt.Errorf("%s: reading its submission: %w", name, err)
		}
		if sub != nil && sub.Variables != "" {
			if err := readVarFile(name, sub.Variables, m); err != nil {
				return false, err
			}
		}
	}
	for path, fields := range map[string]map[string]*types.String{
		storageVarPath: {"access_key": &m.StorageAccessKey},
		blobVarPath: {"access_key": &m.BlobAccessKey, "secret_key": &m.BlobSecretKey, "admin_token": &m.BlobAdminToken,
			"storage_secret_key": &m.StorageSecretKey},
		placerVarPath: {"api_token": &m.PlacerToken},
	} {
		v, _, err := d.nomad.Variables().Read(path, nil)
		if errors.Is(err, nomadapi.ErrVariablePathNotFound) || isNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("reading Nomad variable %s: %w", path, err)
		}
		for key, field := range fields {
			*field = types.StringValue(v.Items[key])
		}
	}
	return true, nil
}

// teardown purges the jobs in reverse order, waits until their
// allocations have stopped, and deletes the variables.
func (d *deployer) teardown(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for i := len(jobs.PlatformOrder) - 1; i >= 0; i-- {
		name := jobs.PlatformOrder[i]
		allocs, _, err := d.nomad.Jobs().Allocations(name, true, nil)
		if err != nil && !isNotFound(err) {
			return fmt.Errorf("%s: listing allocations: %w", name, err)
		}
		// stop, wait for the tasks to exit (allocations stay readable while
		// the job exists), then purge
		wo := (&nomadapi.WriteOptions{}).WithContext(ctx)
		if _, _, err := d.nomad.Jobs().Deregister(name, false, wo); err != nil && !isNotFound(err) {
			return fmt.Errorf("%s: stopping: %w", name, err)
		}
		for _, a := range allocs {
			if err := d.waitStopped(ctx, a.ID); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		if _, _, err := d.nomad.Jobs().Deregister(name, true, wo); err != nil && !isNotFound(err) {
			return fmt.Errorf("%s: purging: %w", name, err)
		}
	}
	for _, path := range []string{placerVarPath, blobVarPath, storageVarPath} {
		if _, err := d.nomad.Variables().Delete(path, nil); err != nil && !isNotFound(err) {
			return fmt.Errorf("deleting Nomad variable %s: %w", path, err)
		}
	}
	return d.removeACL(ctx)
}

func (d *deployer) waitStopped(ctx context.Context, allocID string) error {
	for {
		a, _, err := d.nomad.Allocations().Info(allocID, nil)
		if isNotFound(err) || (err == nil && a.ClientTerminalStatus()) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("allocation %s still running: %w", allocID, ctx.Err())
		case <-time.After(d.poll):
		}
	}
}

// isNotFound is Nomad's 404 (the API returns its UnexpectedResponseError
// by value).
func isNotFound(err error) bool {
	var e nomadapi.UnexpectedResponseError
	return errors.As(err, &e) && e.StatusCode() == http.StatusNotFound
}
