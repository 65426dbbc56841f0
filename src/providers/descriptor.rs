//! What the engine knows of a kind without calling AWS ([`Descriptor`]): its name, what forces a replacement,
//! how long its operations take, what AWS accepts of what it sends, whether destroy keeps it and how a destroy
//! without state finds it ([`WithoutState`]), and the unique name preflight checks. Each provider states it in
//! one place, [`Provider::descriptor`](super::Provider::descriptor).

use super::{contract, preflight};

/// What the engine knows of a kind without calling AWS: its name and how a plan treats its changes. Each
/// provider states it in one place, [`super::Provider::descriptor`]; the engine reads it through the provided methods.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Descriptor {
    /// The kind, one of [`crate::graph::kinds`], such as `aws_subnet`.
    pub kind: &'static str,
    /// Attributes whose change AWS cannot apply in place: changing one plans a replacement.
    pub force_new: &'static [&'static str],
    /// See [`super::Provider::adoptable_by_tags`].
    pub adoptable_by_tags: bool,
    /// How a destroy without state finds it, or why destroy leaves it in place; see [`WithoutState`].
    pub without_state: WithoutState,
    /// See [`super::Provider::import_id`].
    pub import_id: Option<&'static str>,
    /// A lookup ([`lookup`](super::lookup)): its create only checks that what the blueprint names exists, and changes nothing.
    pub lookup: bool,
    /// How long its operations usually take in AWS; see [`Descriptor::takes`].
    pub typical: Typical,
    /// What AWS accepts of the names, tags, descriptions and documents it sends; see [`contract`].
    pub sends: &'static [contract::Constraint],
    /// Attributes that say where kbp reads an input (a directory, a chart's registry), not what it makes: a
    /// change of one alone plans nothing, so the same stack planned from another directory or machine (an
    /// absolute path that differs) has no changes. They are written to state with the next real change.
    pub sources: &'static [&'static str],
    /// Replaced new-one-first: the replacement is created (under another name where names are unique), what
    /// depends on it moves over ([`super::Provider::hand_over`]), then the old one is deleted. For what service runs on.
    pub create_before_destroy: bool,
}

/// Typical seconds a kind's create, update and delete take in AWS, waits included: what the walk orders its
/// ready operations by (the longest chain of work after each first), and what a critical-path estimate adds up.
/// Figures, not promises; most kinds are one API call, a second at most.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Typical {
    /// Seconds a create takes.
    pub create: u32,
    /// Seconds an update takes.
    pub update: u32,
    /// Seconds a delete takes.
    pub delete: u32,
}

impl Typical {
    /// A kind whose every operation is one quick API call.
    pub const ONE_CALL: Typical = Typical { create: 1, update: 1, delete: 1 };
}

impl Descriptor {
    /// The kind `kind`, which a destroy without state finds as `without_state` says, sending values AWS holds to
    /// `sends` ([`contract`]: `kbp validate` checks them before anything is made; `&[]` when it sends no name,
    /// text, tags or document). Both are arguments, not options: a kind cannot be registered without saying.
    /// Its attributes all change in place, and it is found again only by its create answering "already exists".
    pub const fn new(kind: &'static str, without_state: WithoutState, sends: &'static [contract::Constraint]) -> Self {
        Descriptor {
            kind,
            force_new: &[],
            adoptable_by_tags: false,
            without_state,
            import_id: None,
            lookup: false,
            typical: Typical::ONE_CALL,
            sends,
            sources: &[],
            create_before_destroy: false,
        }
    }

    /// Replaced new-one-first; see [`Descriptor::create_before_destroy`].
    pub const fn creates_before_destroying(self) -> Self {
        Descriptor { create_before_destroy: true, ..self }
    }

    /// With `attrs` naming where inputs are read from; see [`Descriptor::sources`].
    pub const fn sources(self, attrs: &'static [&'static str]) -> Self {
        Descriptor { sources: attrs, ..self }
    }

    /// Usually taking `typical` seconds to create, update and delete in AWS (an EKS cluster ten minutes to create); see
    /// [`Typical`]. Kinds that are one API call leave the default.
    pub const fn takes(self, typical: Typical) -> Self {
        Descriptor { typical, ..self }
    }

    /// With `attrs` forcing a replacement when they change.
    pub const fn force_new(self, attrs: &'static [&'static str]) -> Self {
        Descriptor { force_new: attrs, ..self }
    }

    /// Found again by its kbp tags alone; see [`super::Provider::adoptable_by_tags`].
    pub const fn adoptable_by_tags(self) -> Self {
        Descriptor { adoptable_by_tags: true, ..self }
    }

    /// Why destroy leaves it in place, when it does ([`WithoutState::Kept`]); see
    /// [`super::Provider::retain_on_destroy`].
    pub const fn kept_because(&self) -> Option<&'static str> {
        match self.without_state {
            WithoutState::Kept(because) => Some(because),
            _ => None,
        }
    }

    /// The account- or region-unique name its create claims, which preflight checks is free: the name its
    /// contract says is [`contract::Unique::InAccount`]; see [`super::Provider::name_holder`].
    pub fn unique_name(&self) -> Option<preflight::UniqueName> {
        self.sends.iter().find_map(|c| match c.rule {
            contract::Rule::Name { unique: contract::Unique::InAccount(what), .. } => {
                Some(preflight::UniqueName { what, attr: c.attr })
            }
            _ => None,
        })
    }

    /// A lookup of what the stack uses but does not own; see [`lookup`](super::lookup).
    pub const fn looked_up(self) -> Self {
        Descriptor { lookup: true, ..self }
    }

    /// Taken under management by `kbp import` given an ID of the form `id` describes; see [`super::Provider::import_id`].
    pub const fn imported_by(self, id: &'static str) -> Self {
        Descriptor { import_id: Some(id), ..self }
    }
}

/// How `kbp destroy --from-tags` and `kbp gc`, which start from no state, find a kind's resources: every kind
/// says ([`Descriptor::new`] takes it), so a stack whose state is lost still leaves nothing behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WithoutState {
    /// By its kbp tags: [`super::Provider::tagged`] lists them.
    Tags,
    /// Deleted with the resource of this kind it belongs to (a route with its table, an add-on with its
    /// cluster, an object in the cluster with the cluster).
    GoesWith(&'static str),
    /// Made by others for the cluster, and found by [`super::Provider::discover`].
    Discovered,
    /// Never deleted by destroy, for the reason given (said in the plan): account-wide resources such as
    /// service-linked roles, a network the stack only uses.
    Kept(&'static str),
    /// Nothing finds it, for the reason given (it carries no tag of kbp's, or there is nothing in AWS to delete).
    Untraced(&'static str),
}
