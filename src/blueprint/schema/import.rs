//! The `[[import]]` tables: resources that already exist in AWS, to take under management at an address of the
//! blueprint during plan and apply (`kbp import` in the blueprint, as Terraform's import blocks); and the
//! `[[moved]]` tables: addresses renamed, whose state entries move with them (Terraform's moved blocks). That each
//! `to` is an address of the compiled graph is checked once the blueprint is compiled
//! ([`crate::blueprint::Loaded::imports`]).

use super::Presence::Required;
use super::{field, str_rule, Ty};
use crate::blueprint::rules::aws;

const ADDRESS: Ty =
    str_rule("a resource address such as `eks_cluster.main` or `iam_role.cluster`", aws::resource_address);
const ID: Ty = str_rule("a resource ID (1 to 2048 characters)", aws::resource_id);

const IMPORT: Ty = Ty::Table(&[
    field("to", ADDRESS, Required, "The address to import into, as `kbp graph` and `kbp plan` show it."),
    field("id", ID, Required, "Its ID in AWS, in its kind's form (a VPC ID, a role name, `cluster:nodegroup`)."),
]);

pub(super) const IMPORTS: Ty = Ty::List { item: &IMPORT, max: 500, unique: false, non_empty: false };

const MOVED: Ty = Ty::Table(&[
    field("from", ADDRESS, Required, "The address state holds the resource at, as an older blueprint compiled it."),
    field("to", ADDRESS, Required, "The address the blueprint compiles it to now."),
]);

pub(super) const MOVES: Ty = Ty::List { item: &MOVED, max: 500, unique: false, non_empty: false };
