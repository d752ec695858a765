package broker

import (
	"sort"

	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/naming"
)

// Tenants, as upstream's /admin/v2/tenants. A tenant lists the clusters it may use (only this
// broker's cluster exists) and its admin roles (who may administer it when authorization is
// on: auth_check.go).

// Tenants lists the tenants, sorted.
func (b *Broker) Tenants() []string {
	a, unlock := b.adminLocked()
	defer unlock()
	out := make([]string, 0, len(a.tenants))
	for t := range a.tenants {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Tenant returns a tenant's info.
func (b *Broker) Tenant(name string) (adminapi.TenantInfo, error) {
	a, unlock := b.adminLocked()
	defer unlock()
	t, ok := a.tenants[name]
	if !ok {
		return adminapi.TenantInfo{}, adminErr(ErrNotFound, "Tenant does not exist")
	}
	return cloneTenant(*t), nil
}

func cloneTenant(t adminapi.TenantInfo) adminapi.TenantInfo {
	t.AdminRoles = append([]string{}, t.AdminRoles...)
	t.AllowedClusters = append([]string{}, t.AllowedClusters...)
	return t
}

func (b *Broker) checkTenantInfo(info adminapi.TenantInfo) error {
	if len(info.AllowedClusters) == 0 {
		return adminErr(ErrPreconditionFailed, "Clusters can not be empty")
	}
	for _, c := range info.AllowedClusters {
		if c != b.cfg.ClusterName {
			return adminErr(ErrPreconditionFailed, "Clusters do not exist")
		}
	}
	return nil
}

// CreateTenant creates a tenant; ErrAlreadyExists if it exists.
func (b *Broker) CreateTenant(name string, info adminapi.TenantInfo) error {
	if !naming.ValidNamePart(name) {
		return adminErr(ErrInvalidName, "Tenant name is not valid: %s", name)
	}
	if err := b.checkTenantInfo(info); err != nil {
		return err
	}
	a, unlock := b.adminLocked()
	defer unlock()
	if _, ok := a.tenants[name]; ok {
		return adminErr(ErrAlreadyExists, "Tenant already exists")
	}
	info = cloneTenant(info)
	if err := b.persistAdmin(storage.BucketTenants, name, &info); err != nil {
		return err
	}
	a.tenants[name] = &info
	return nil
}

// UpdateTenant replaces a tenant's info; ErrNotFound if it does not exist.
func (b *Broker) UpdateTenant(name string, info adminapi.TenantInfo) error {
	if err := b.checkTenantInfo(info); err != nil {
		return err
	}
	a, unlock := b.adminLocked()
	defer unlock()
	if _, ok := a.tenants[name]; !ok {
		return adminErr(ErrNotFound, "Tenant does not exist")
	}
	info = cloneTenant(info)
	if err := b.persistAdmin(storage.BucketTenants, name, &info); err != nil {
		return err
	}
	a.tenants[name] = &info
	return nil
}

// DeleteTenant deletes a tenant. Without force it must have no namespaces (ErrConflict); with
// force its namespaces are deleted first, forcibly.
func (b *Broker) DeleteTenant(name string, force bool) error {
	if _, err := b.Tenant(name); err != nil {
		return err
	}
	nss, _ := b.Namespaces(name)
	if len(nss) > 0 && !force {
		return adminErr(ErrConflict, "The tenant still has active namespaces")
	}
	for _, ns := range nss {
		if err := b.DeleteNamespace(ns, true); err != nil && !isKind(err, ErrNotFound) {
			return err
		}
	}
	b.topics.mu.Lock()
	defer b.topics.mu.Unlock()
	for ns := range b.topics.namespaces {
		if t, _, _ := splitNamespace(ns); t == name {
			return adminErr(ErrConflict, "The tenant still has active namespaces")
		}
	}
	a, unlock := b.adminLocked()
	defer unlock()
	if err := b.persistAdmin(storage.BucketTenants, name, nil); err != nil {
		return err
	}
	delete(a.tenants, name)
	return nil
}
