package broker

import (
	"encoding/json"

	"github.com/letterbox-dev/letterbox/broker/policy"
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// The admin state in the store's metadata: tenants, namespace policies, topic records (the
// terminated mark), topic policies and resource groups, each under its bucket as JSON, written
// as it changes and read back once at start.

// persistAdmin stores v as JSON under key in bucket (nil deletes it).
func (b *Broker) persistAdmin(bucket, key string, v any) error {
	var data []byte
	if v != nil {
		var err error
		if data, err = json.Marshal(v); err != nil {
			return err
		}
	}
	err := b.store.Metadata().Update(func(tx storage.MetadataTx) error {
		if data == nil {
			return tx.Delete(bucket, key)
		}
		return tx.Put(bucket, key, data)
	})
	if err != nil {
		return adminErr(ErrPreconditionFailed, "cannot store %s %s: %v", bucket, key, err)
	}
	return nil
}

// recoverAdmin loads tenants, namespaces with their policies and terminated topics from the
// store. Called by recover, before the broker serves anything.
func (b *Broker) recoverAdmin() error {
	meta := b.store.Metadata()
	a, unlock := b.adminLocked()
	defer unlock()
	var bad error
	keep := func(err error) {
		if bad == nil {
			bad = err
		}
	}
	err := meta.Scan(storage.BucketTenants, "", func(key string, v []byte) bool {
		var t adminapi.TenantInfo
		if err := json.Unmarshal(v, &t); err != nil {
			keep(err)
			return true
		}
		a.tenants[key] = &t
		return true
	})
	if err != nil {
		return err
	}
	err = meta.Scan(storage.BucketNamespaces, "", func(key string, v []byte) bool {
		p := &adminapi.Policies{}
		if err := json.Unmarshal(v, p); err != nil {
			keep(err)
			return true
		}
		// Namespaces stored before their bundles were checked may hold a count alone.
		if nb, err := policy.CheckBundles(p.Bundles); err == nil {
			p.Bundles = nb
		} else {
			p.Bundles = policy.DefaultBundles()
		}
		a.policies[key] = p
		b.topics.namespaces[key] = true
		return true
	})
	if err != nil {
		return err
	}
	err = meta.Scan(storage.BucketTopics, "", func(key string, v []byte) bool {
		var rec topicRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			keep(err)
			return true
		}
		if rec.Terminated {
			a.terminated[key] = true
		}
		return true
	})
	if err != nil {
		return err
	}
	if err := b.recoverTopicPolicies(a); err != nil {
		return err
	}
	if err := b.recoverResourceGroups(a); err != nil {
		return err
	}
	if bad != nil {
		b.log.Error("some stored tenants, namespaces or topic properties could not be recovered", "err", bad)
	}
	return nil
}

// recoverTopicPolicies loads the stored topic policies. Called with the admin lock held, by
// recoverAdmin.
func (b *Broker) recoverTopicPolicies(a *adminState) error {
	return b.store.Metadata().Scan(bucketTopicPolicies, "", func(key string, v []byte) bool {
		tp := &adminapi.TopicPolicies{}
		if err := json.Unmarshal(v, tp); err != nil {
			b.log.Error("a topic's stored policies could not be read; they are ignored", "topic", key, "err", err)
			return true
		}
		a.topicPolicies[key] = tp
		return true
	})
}

// bucketTopicPolicies holds TopicPolicies JSON by topic full name (a partitioned topic's base).
const bucketTopicPolicies = "topicPolicies"

// recoverResourceGroups loads the groups from the store. Called with the admin lock held.
func (b *Broker) recoverResourceGroups(a *adminState) error {
	return b.store.Metadata().Scan(bucketResourceGroups, "", func(key string, v []byte) bool {
		var g adminapi.ResourceGroup
		if err := json.Unmarshal(v, &g); err != nil {
			b.log.Error("a stored resource group could not be read; it is left out", "group", key, "err", err)
			return true
		}
		a.resourceGroups[key] = policy.CreatedGroup(g)
		return true
	})
}

const bucketResourceGroups = "resourceGroups"
