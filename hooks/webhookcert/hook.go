/*
Copyright 2026 Flant JSC

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package webhookcert keeps the serving certificate of the module's admission
// webhook in values (managedStarrocks.internal.webhookCert) with module-sdk's
// tls-certificate common hook: a self-signed CA and a certificate for the
// webhook Service, reused from the Secret the templates render from these
// values (templates/webhook/secret.yaml) and renewed before they expire.
package webhookcert

import (
	tlscert "github.com/deckhouse/module-sdk/common-hooks/tls-certificate"

	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
)

// Names the templates use for the webhook Service and its TLS Secret.
const (
	ServiceName   = "managed-starrocks-webhook"
	TLSSecretName = "managed-starrocks-webhook-tls"
	ValuesPath    = shared.ValuesPrefix + ".internal.webhookCert"
)

// Conf is the tls-certificate hook configuration.
var Conf = tlscert.GenSelfSignedTLSHookConf{
	CN:            ServiceName,
	Namespace:     shared.ModuleNamespace,
	TLSSecretName: TLSSecretName,
	// The apiserver dials the Service by its svc name; the cluster-domain
	// form is there for clients that resolve the FQDN.
	SANs: tlscert.DefaultSANs([]string{
		ServiceName,
		ServiceName + "." + shared.ModuleNamespace,
		ServiceName + "." + shared.ModuleNamespace + ".svc",
		"%CLUSTER_DOMAIN%://" + ServiceName + "." + shared.ModuleNamespace + ".svc",
	}),
	FullValuesPathPrefix: ValuesPath,
}

var _ = tlscert.RegisterInternalTLSHookEM(Conf)
