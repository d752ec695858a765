package broker

import (
	"slices"
	"strings"

	"github.com/letterbox-dev/letterbox/broker/policy"
	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// Resource groups, as upstream's /admin/v2/resourcegroups: named rates (adminapi.ResourceGroup)
// that the topics of every namespace attached to a group share (resourcegroup_rate.go enforces
// them). They are kept in the store's resourceGroups bucket, as upstream keeps them in its
// metadata store, and read back at start. A group may not be deleted while a namespace is
// attached to it, nor a namespace attached to a group that does not exist.

// ResourceGroups lists the groups' names, sorted.
func (b *Broker) ResourceGroups() []string {
	a, unlock := b.adminLocked()
	defer unlock()
	names := []string{}
	for name := range a.resourceGroups {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// ResourceGroup returns group name.
func (b *Broker) ResourceGroup(name string) (adminapi.ResourceGroup, error) {
	a, unlock := b.adminLocked()
	defer unlock()
	g, ok := a.resourceGroups[name]
	if !ok {
		return adminapi.ResourceGroup{}, adminErr(ErrNotFound, "ResourceGroup does not exist")
	}
	return g, nil
}

// PutResourceGroup creates group name with g's rates (those g leaves unset are -1, no limit),
// or, when it exists, sets the rates g sets and keeps the others, as upstream's
// createOrUpdateResourceGroup. Its topics apply the new rates at once, with fresh buckets.
func (b *Broker) PutResourceGroup(name string, g adminapi.ResourceGroup) error {
	if strings.TrimSpace(name) == "" {
		return adminErr(ErrPreconditionFailed, "ResourceGroup name is not valid")
	}
	a, unlock := b.adminLocked()
	defer unlock()
	if old, ok := a.resourceGroups[name]; ok {
		g = policy.UpdatedGroup(old, g)
	} else {
		g = policy.CreatedGroup(g)
	}
	if err := b.persistAdmin(bucketResourceGroups, name, g); err != nil {
		return err
	}
	a.resourceGroups[name] = g
	a.version.Add(1)
	return nil
}

// DeleteResourceGroup deletes group name, refused while a namespace is attached to it.
func (b *Broker) DeleteResourceGroup(name string) error {
	if err := b.deleteResourceGroup(name); err != nil {
		return err
	}
	b.groups.drop(name) // after the admin lock: both are leaves
	return nil
}

func (b *Broker) deleteResourceGroup(name string) error {
	a, unlock := b.adminLocked()
	defer unlock()
	if _, ok := a.resourceGroups[name]; !ok {
		return adminErr(ErrNotFound, "ResourceGroup does not exist")
	}
	for _, p := range a.policies {
		if p.ResourceGroupName == name {
			return adminErr(ErrPreconditionFailed, "ResourceGroup is in use")
		}
	}
	if err := b.persistAdmin(bucketResourceGroups, name, nil); err != nil {
		return err
	}
	delete(a.resourceGroups, name)
	a.version.Add(1)
	return nil
}

// SetNamespaceResourceGroup attaches namespace ns to group name ("": detaches it).
func (b *Broker) SetNamespaceResourceGroup(ns, name string) error {
	return b.UpdateNamespacePolicies(ns, func(p *adminapi.Policies) error {
		p.ResourceGroupName = name
		return nil
	})
}

// checkResourceGroup refuses to attach a namespace to a group that does not exist, as upstream.
// Called with the admin lock held.
func (a *adminState) checkResourceGroup(p *adminapi.Policies) error {
	if p.ResourceGroupName == "" {
		return nil
	}
	if _, ok := a.resourceGroups[p.ResourceGroupName]; !ok {
		return adminErr(ErrPreconditionFailed, "ResourceGroup does not exist")
	}
	return nil
}
