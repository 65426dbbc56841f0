//! The NodePool and EC2NodeClass CRD rules, end to end: each is refused when broken and accepted when right.
