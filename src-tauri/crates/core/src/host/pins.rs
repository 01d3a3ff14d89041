//! Pins in the host (TD-02, TD-04): each server's surface is pinned the first time it is seen
//! running, every later catalog is assessed against the pin, and what is new or changed waits
//! for the person's review.
//!
//! # Where it is enforced
//! The assessment of a catalog is cached per server, keyed by the identity of the catalog
//! snapshot it was made for (`Arc::ptr_eq`). Every reader passes the catalog it is about to
//! use, so a catalog that arrived a moment ago is assessed before anything of it is used:
//! there is no window between a `list_changed` and the hold in which a changed tool could be
//! called. A tool call pays for the assessment only once per catalog, not per call.
//! - `check_call` (every call, by a model or a person) refuses a held tool with
//!   [`HostError::Held`].
//! - `disabled_tools` reports held tools as not offered, so `catalogs()`, `tool_names()` and
//!   `HostTools::load` leave them out of what a model sees.
//! - `system_prompt` leaves out instructions that changed since they were approved.
//!
//! - `host::run` refuses to expand a held prompt or complete its arguments: a prompt's
//!   messages go into conversations (a slash command), so a changed one waits like a tool.
//!
//! Resource templates are pinned and shown for review but reads are not blocked: a person
//! picks a resource by hand and sees it before it goes anywhere.
//!
//! # When a pin is made
//! A server with no pin is pinned when its catalog is first seen while it is `Running` (so the
//! empty placeholder catalog of a server that is still starting is never pinned). Tools past
//! [`FIRST_PIN_TOOLS_MAX`] are left out of that first pin and so wait for review like new
//! ones (TD-04's cap, without breaking servers with thousands of tools). Approving a launch
//! spec again after it changed (SP-03) keeps the pin; removing the server drops it.
//!
//! A task per started server watches its catalog and status, so pinning, the record of what
//! waits (`pin_pending`) and the [`HostEvent::PinReview`] event happen as soon as a catalog
//! arrives, not only when something reads it.
//!
//! The cache is per process: an approval made by another process (the CLI while the desktop
//! app runs) is seen here when the server's catalog next changes or it restarts. That errs on
//! the side of holding.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::Serialize;

use super::{Host, HostError};
use crate::approval::audit::{AuditContext, AuditEvent, PinChange};
use crate::approval::pins::{
    assess, diff, Assessment, HoldReason, ItemKey, ItemKind, Pin, PinDiff, PinnedItem,
    FIRST_PIN_TOOLS_MAX,
};
use crate::events::HostEvent;
use crate::hygiene::{self, Finding};
use crate::ids::{ServerId, ToolRef};
use crate::mcp::catalog::{CatalogSnapshot, ToolInfo};
use crate::supervisor::{ServerHandle, ServerStatus};

/// The assessment of one catalog of one server.
struct GateState {
    /// The catalog assessed (compared by identity).
    catalog: CatalogSnapshot,
    /// What of it waits for review.
    assessment: Assessment,
}

/// The per-process cache of assessments. A `std` mutex: it is held only to look up, insert or
/// remove an `Arc`, never across an `.await`.
#[derive(Default)]
pub(super) struct PinGate {
    states: Mutex<HashMap<ServerId, Arc<GateState>>>,
}

impl PinGate {
    fn states(&self) -> MutexGuard<'_, HashMap<ServerId, Arc<GateState>>> {
        self.states.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One item waiting for review.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Held {
    /// Its kind (tools, prompts and instructions are held back; templates only flagged).
    pub kind: ItemKind,
    /// Its name (empty for instructions).
    pub name: String,
    /// Why.
    pub reason: HoldReason,
}

/// What a person reviews for one server.
#[derive(Clone, Debug, Serialize)]
pub struct PinReview {
    /// The server.
    pub server: ServerId,
    /// What differs from the pin, field by field.
    pub diff: PinDiff,
    /// The digest of the surface the diff was made against; pass it back when approving so
    /// an approval of a surface that changed in between is refused.
    pub surface: String,
    /// Hygiene findings of the new and changed tools (and instructions, under the empty name),
    /// by name.
    pub findings: BTreeMap<String, Vec<Finding>>,
    /// Whether this comes from the running server; otherwise from the record of the last
    /// catalog seen (removed items are then unknown).
    pub live: bool,
    /// How many tools a first pin takes without review.
    pub first_pin_cap: usize,
}

/// One tool's hygiene findings.
#[derive(Clone, Debug, Serialize)]
pub struct ToolFindings {
    /// The tool.
    pub tool: String,
    /// What was found.
    pub findings: Vec<Finding>,
    /// Why it is held for review, if it is.
    pub held: Option<HoldReason>,
}

/// The pin and the surface to compare it with.
struct Source {
    pinned: Pin,
    current: Pin,
    live: bool,
}

impl Host {
    /// The assessment of `catalog` of server `id`, pinning the server first if it never was
    /// and is running. See the module docs for why the catalog is passed in.
    async fn gate(
        &self,
        id: &ServerId,
        catalog: &CatalogSnapshot,
    ) -> Result<Arc<GateState>, HostError> {
        let cached = self.inner.seam.pins.states().get(id).cloned();
        if let Some(s) = &cached {
            if Arc::ptr_eq(&s.catalog, catalog) {
                return Ok(s.clone());
            }
        }
        let current = Pin::of(catalog);
        let store = &self.inner.store;
        let pinned = match store.pin(id).await? {
            Some(p) => p,
            None if self.is_running(id) => {
                let first = Pin::first(catalog);
                if store.pin_first(id, &first).await? {
                    tracing::info!(server = %id, items = first.items.len(), "surface pinned on first use");
                    first
                } else {
                    store.pin(id).await?.unwrap_or_default()
                }
            }
            // Not pinned and not running: the catalog may be the placeholder of a server that
            // is starting. Nothing to hold yet, and nothing cached, so the first real look pins.
            None => {
                return Ok(Arc::new(GateState {
                    catalog: catalog.clone(),
                    assessment: Assessment::default(),
                }))
            }
        };
        let state = Arc::new(GateState {
            catalog: catalog.clone(),
            assessment: assess(&pinned, &current),
        });
        self.inner
            .seam
            .pins
            .states()
            .insert(id.clone(), state.clone());
        let changed = cached
            .as_ref()
            .is_none_or(|c| c.assessment.pending != state.assessment.pending);
        if changed {
            self.record_pending(id, &state.assessment, &current, cached.is_some())
                .await?;
        }
        Ok(state)
    }

    /// Writes what waits for review, tells the server's log and the shells.
    async fn record_pending(
        &self,
        id: &ServerId,
        assessment: &Assessment,
        current: &Pin,
        had_previous: bool,
    ) -> Result<(), HostError> {
        let items: Vec<(ItemKey, HoldReason, PinnedItem)> = assessment
            .pending
            .iter()
            .filter_map(|(k, r)| current.items.get(k).map(|i| (k.clone(), *r, i.clone())))
            .collect();
        self.inner.store.set_pin_pending(id, &items).await?;
        // The log records what was held, once per new assessment (OB-01).
        let held: Vec<(AuditEvent, AuditContext)> = items
            .iter()
            .map(|(k, _, item)| {
                (
                    AuditEvent::Pin {
                        change: PinChange::Changed,
                        digest: item.digest.clone(),
                        previous: None,
                    },
                    AuditContext {
                        server: Some(id.clone()),
                        tool: Some(Arc::from(format!("{} {}", k.kind.as_str(), k.name))),
                        ..AuditContext::default()
                    },
                )
            })
            .collect();
        if !held.is_empty() {
            self.audit_all(held).await;
        }
        if !items.is_empty() {
            let names: Vec<String> = items
                .iter()
                .take(5)
                .map(|(k, r, _)| match k.kind {
                    ItemKind::Instructions => format!("instructions ({})", r.as_str()),
                    kind => format!("{} {:?} ({})", kind.as_str(), k.name, r.as_str()),
                })
                .collect();
            let more = items.len().saturating_sub(names.len());
            let what = if more > 0 {
                format!("{} and {more} more", names.join(", "))
            } else {
                names.join(", ")
            };
            tracing::warn!(server = %id, pending = items.len(), "surface differs from its pin; held for review");
            if let Some(h) = self.handle(id) {
                h.logs().note(&format!(
                    "held for review until approved (`switchboard server review {id}`): {what}"
                ));
            }
        }
        if had_previous || !items.is_empty() {
            let _ = self.inner.events.send(HostEvent::PinReview {
                server: id.clone(),
                pending: items.len(),
            });
        }
        Ok(())
    }

    fn is_running(&self, id: &ServerId) -> bool {
        self.handle(id)
            .is_some_and(|h| matches!(h.status(), ServerStatus::Running { .. }))
    }

    /// Why a tool of `catalog` is held for review, if it is (for `check_call`).
    pub(super) async fn held_tool(
        &self,
        id: &ServerId,
        catalog: &CatalogSnapshot,
        tool: &str,
    ) -> Result<Option<HoldReason>, HostError> {
        Ok(self.gate(id, catalog).await?.assessment.tool(tool))
    }

    /// Why a prompt of `catalog` is held for review, if it is (for `host::run`).
    pub(super) async fn held_prompt(
        &self,
        id: &ServerId,
        catalog: &CatalogSnapshot,
        prompt: &str,
    ) -> Result<Option<HoldReason>, HostError> {
        Ok(self.gate(id, catalog).await?.assessment.prompt(prompt))
    }

    /// `off` plus the tools of the server's current catalog that are held (for
    /// `disabled_tools`). Returns `off` itself when nothing is held.
    pub(super) async fn with_held(
        &self,
        id: &ServerId,
        off: Arc<HashSet<String>>,
    ) -> Result<Arc<HashSet<String>>, HostError> {
        let Some(h) = self.handle(id) else {
            return Ok(off);
        };
        let state = self.gate(id, &h.catalog()).await?;
        let mut held = state.assessment.held_tools().peekable();
        if held.peek().is_none() {
            return Ok(off);
        }
        let mut all: HashSet<String> = (*off).clone();
        all.extend(held.map(str::to_owned));
        Ok(Arc::new(all))
    }

    /// The tools of a server the user switched off, cached in memory: a tool call must not pay
    /// for a database read. The cache is dropped whenever a switch changes.
    pub(super) async fn switched_off(
        &self,
        id: &ServerId,
    ) -> Result<Arc<HashSet<String>>, HostError> {
        if let Some(d) = self.inner.disabled().get(id) {
            return Ok(d.clone());
        }
        let set: Arc<HashSet<String>> = Arc::new(
            self.inner
                .store
                .disabled_tools(id)
                .await?
                .into_iter()
                .collect(),
        );
        self.inner.disabled().insert(id.clone(), set.clone());
        Ok(set)
    }

    /// Whether the instructions in `catalog` may go to a model (not changed since approved).
    pub(super) async fn instructions_approved(
        &self,
        id: &ServerId,
        catalog: &CatalogSnapshot,
    ) -> Result<bool, HostError> {
        Ok(!self.gate(id, catalog).await?.assessment.instructions_held())
    }

    /// Starts the task that assesses a server's catalog as soon as it changes or the server
    /// comes up. It ends when the supervisor does, or with the host.
    pub(super) fn watch_pins(&self, handle: &ServerHandle) {
        let inner = Arc::downgrade(&self.inner);
        let id = handle.id().clone();
        let mut catalog = handle.watch_catalog();
        let mut status = handle.watch_status();
        let mut kept: Option<CatalogSnapshot> = None;
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    r = catalog.changed() => if r.is_err() { break },
                    r = status.changed() => if r.is_err() { break },
                }
                let running = matches!(*status.borrow_and_update(), ServerStatus::Running { .. });
                if !running {
                    continue;
                }
                let snapshot = catalog.borrow_and_update().clone();
                let Some(inner) = inner.upgrade() else { break };
                let host = Host { inner };
                // What the catalog shows once the server stops (`host::demand`).
                if kept.as_ref().is_none_or(|k| !Arc::ptr_eq(k, &snapshot)) {
                    host.remember_tools(&id, &snapshot.tools).await;
                    kept = Some(snapshot.clone());
                }
                if let Err(e) = host.gate(&id, &snapshot).await {
                    tracing::warn!(server = %id, error = %e, "could not assess the catalog against its pin");
                }
            }
        });
    }

    /// The pin and the surface to compare it with: the running server's catalog, or else the
    /// record of what the last catalog seen had pending.
    async fn pin_source(&self, id: &ServerId) -> Result<Source, HostError> {
        self.server(id).await?;
        if let Some(h) = self.handle(id) {
            let catalog = h.catalog();
            if self.is_running(id) {
                // Pins on first sight, like any other look.
                self.gate(id, &catalog).await?;
                if let Some(pinned) = self.inner.store.pin(id).await? {
                    return Ok(Source {
                        pinned,
                        current: Pin::of(&catalog),
                        live: true,
                    });
                }
            }
        }
        let pinned = self.inner.store.pin(id).await?.unwrap_or_default();
        let mut current = pinned.clone();
        for p in self.inner.store.pin_pending(id).await? {
            current.items.insert(p.key, p.item);
        }
        Ok(Source {
            pinned,
            current,
            live: false,
        })
    }

    /// What changed on a server since its surface was approved, field by field, with the
    /// hygiene findings of what is new or changed.
    pub async fn pin_review(&self, server: &ServerId) -> Result<PinReview, HostError> {
        let src = self.pin_source(server).await?;
        let d = diff(&src.pinned, &src.current);
        let others = self.other_tool_names(server);
        let mut findings = BTreeMap::new();
        for c in d.added.iter().chain(&d.changed) {
            let Some(item) = src.current.items.get(&ItemKey {
                kind: c.kind,
                name: c.name.clone(),
            }) else {
                continue;
            };
            let found = match c.kind {
                ItemKind::Tool => serde_json::from_str::<ToolInfo>(&item.canonical)
                    .map(|t| hygiene::check_tool(&t, &others))
                    .unwrap_or_default(),
                ItemKind::Instructions => {
                    serde_json::from_str::<serde_json::Value>(&item.canonical)
                        .ok()
                        .and_then(|v| v["instructions"].as_str().map(str::to_owned))
                        .map(|t| hygiene::check_instructions(&t, &others))
                        .unwrap_or_default()
                }
                _ => Vec::new(),
            };
            if !found.is_empty() {
                findings.insert(c.name.clone(), found);
            }
        }
        Ok(PinReview {
            server: server.clone(),
            surface: src.current.surface_digest(),
            diff: d,
            findings,
            live: src.live,
            first_pin_cap: FIRST_PIN_TOOLS_MAX,
        })
    }

    /// Approves changes: `None` approves every one (tools, prompts, templates, instructions,
    /// and drops removed items from the pin); `Some(names)` approves those tools, prompts and
    /// templates only. Returns how many items were approved.
    pub async fn approve_pin_changes(
        &self,
        server: &ServerId,
        names: Option<Vec<String>>,
    ) -> Result<usize, HostError> {
        self.approve_reviewed(server, names, None).await
    }

    /// Like [`Host::approve_pin_changes`], refused with [`HostError::PinRace`] unless the
    /// surface is still the one reviewed ([`PinReview::surface`]).
    pub async fn approve_reviewed(
        &self,
        server: &ServerId,
        names: Option<Vec<String>>,
        seen: Option<&str>,
    ) -> Result<usize, HostError> {
        let src = self.pin_source(server).await?;
        if seen.is_some_and(|s| s != src.current.surface_digest()) {
            return Err(HostError::PinRace(server.clone()));
        }
        let d = diff(&src.pinned, &src.current);
        let wanted = |kind: ItemKind, name: &str| match &names {
            None => true,
            Some(n) => kind != ItemKind::Instructions && n.iter().any(|x| x == name),
        };
        if let Some(n) = &names {
            let known: HashSet<&str> = d
                .added
                .iter()
                .chain(&d.changed)
                .chain(&d.removed)
                .map(|c| c.name.as_str())
                .collect();
            if let Some(missing) = n.iter().find(|x| !known.contains(x.as_str())) {
                return Err(HostError::Invalid(format!(
                    "{server} has no change to review named {}",
                    crate::escape::short_for_display(missing, 64)
                )));
            }
        }
        let mut upsert = Vec::new();
        for c in d.added.iter().chain(&d.changed) {
            if !wanted(c.kind, &c.name) {
                continue;
            }
            let key = ItemKey {
                kind: c.kind,
                name: c.name.clone(),
            };
            if let Some(item) = src.current.items.get(&key) {
                upsert.push((key, item.clone()));
            }
        }
        let remove: Vec<ItemKey> = d
            .removed
            .iter()
            .filter(|c| wanted(c.kind, &c.name))
            .map(|c| ItemKey {
                kind: c.kind,
                name: c.name.clone(),
            })
            .collect();
        self.inner
            .store
            .approve_pin_items(server, &upsert, &remove)
            .await?;
        let approved: Vec<(AuditEvent, AuditContext)> = upsert
            .iter()
            .map(|(k, item)| {
                (
                    AuditEvent::Pin {
                        change: PinChange::Approved,
                        digest: item.digest.clone(),
                        previous: None,
                    },
                    AuditContext {
                        server: Some(server.clone()),
                        tool: Some(Arc::from(format!("{} {}", k.kind.as_str(), k.name))),
                        ..AuditContext::default()
                    },
                )
            })
            .collect();
        if !approved.is_empty() {
            self.audit_all(approved).await;
        }
        tracing::info!(server = %server, approved = upsert.len(), dropped = remove.len(), "pin changes approved");
        self.inner.seam.pins.states().remove(server);
        match self.handle(server) {
            Some(h) if src.live => {
                self.gate(server, &h.catalog()).await?;
            }
            _ => {
                let left = self.inner.store.pin_pending(server).await?.len();
                let _ = self.inner.events.send(HostEvent::PinReview {
                    server: server.clone(),
                    pending: left,
                });
            }
        }
        let _ = self.inner.events.send(HostEvent::CatalogChanged {
            server: server.clone(),
        });
        Ok(upsert.len() + remove.len())
    }

    /// What of a server waits for review: held tools and instructions, and changed prompts
    /// and templates.
    pub async fn held_tools(&self, server: &ServerId) -> Result<Vec<Held>, HostError> {
        let pending: Vec<(ItemKey, HoldReason)> = match self.handle(server) {
            Some(h) if self.is_running(server) => self
                .gate(server, &h.catalog())
                .await?
                .assessment
                .pending
                .iter()
                .map(|(k, r)| (k.clone(), *r))
                .collect(),
            _ => self
                .inner
                .store
                .pin_pending(server)
                .await?
                .into_iter()
                .map(|p| (p.key, p.reason))
                .collect(),
        };
        Ok(pending
            .into_iter()
            .map(|(k, reason)| Held {
                kind: k.kind,
                name: k.name,
                reason,
            })
            .collect())
    }

    /// The hygiene findings of every tool of a started server that has any, and of every held
    /// tool (so the catalog can flag both).
    pub async fn tool_findings(&self, server: &ServerId) -> Result<Vec<ToolFindings>, HostError> {
        let Some(h) = self.handle(server) else {
            return Ok(Vec::new());
        };
        let catalog = h.catalog();
        let state = self.gate(server, &catalog).await?;
        let others = self.other_tool_names(server);
        Ok(catalog
            .tools
            .iter()
            .filter_map(|t| {
                let findings = hygiene::check_tool(t, &others);
                let held = state.assessment.tool(&t.name);
                (!findings.is_empty() || held.is_some()).then(|| ToolFindings {
                    tool: t.name.clone(),
                    findings,
                    held,
                })
            })
            .collect())
    }

    /// The hygiene findings of one tool, for an approval prompt.
    pub async fn findings_for(&self, tool: &ToolRef) -> Result<Vec<Finding>, HostError> {
        let Some(h) = self.handle(&tool.server) else {
            return Ok(Vec::new());
        };
        let catalog = h.catalog();
        let others = self.other_tool_names(&tool.server);
        Ok(catalog
            .tools
            .iter()
            .find(|t| t.name == *tool.tool)
            .map(|t| hygiene::check_tool(t, &others))
            .unwrap_or_default())
    }

    /// The tool names of every started server other than `server`.
    fn other_tool_names(&self, server: &ServerId) -> HashSet<String> {
        let catalogs: Vec<CatalogSnapshot> = self
            .inner
            .servers()
            .iter()
            .filter(|(id, _)| *id != server)
            .map(|(_, h)| h.catalog())
            .collect();
        let own: HashSet<String> = self
            .handle(server)
            .map(|h| h.catalog().tools.iter().map(|t| t.name.clone()).collect())
            .unwrap_or_default();
        catalogs
            .iter()
            .flat_map(|c| c.tools.iter().map(|t| t.name.clone()))
            .filter(|n| !own.contains(n))
            .collect()
    }
}
