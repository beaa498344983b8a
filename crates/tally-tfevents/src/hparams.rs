//! Hyperparameter summaries for TensorBoard's HParams dashboard.
//!
//! A session is three summaries, written into their own run: the experiment (which
//! hyperparameters and metrics exist), the session start (this session's values) and the
//! session end (status). Messages follow tensorboard/plugins/hparams/{api,plugin_data}.proto.

use crate::proto::{summary, summary_metadata, SummaryMetadata};
use prost::Message;

/// The hparams plugin's name.
pub const HPARAMS_PLUGIN_NAME: &str = "hparams";
/// Tag of the experiment summary.
pub const EXPERIMENT_TAG: &str = "_hparams_/experiment";
/// Tag of the session-start summary.
pub const SESSION_START_INFO_TAG: &str = "_hparams_/session_start_info";
/// Tag of the session-end summary.
pub const SESSION_END_INFO_TAG: &str = "_hparams_/session_end_info";

/// `google.protobuf.Value`, restricted to the kinds hyperparameters use.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProtoValue {
    /// The value.
    #[prost(oneof = "proto_value::Kind", tags = "2, 3, 4")]
    pub kind: Option<proto_value::Kind>,
}

/// Nested types of [`ProtoValue`].
pub mod proto_value {
    /// The kind of a [`ProtoValue`](super::ProtoValue).
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Kind {
        /// A number.
        #[prost(double, tag = "2")]
        Number(f64),
        /// A string.
        #[prost(string, tag = "3")]
        Text(String),
        /// A boolean.
        #[prost(bool, tag = "4")]
        Bool(bool),
    }
}

/// `google.protobuf.ListValue`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ListValue {
    /// The values.
    #[prost(message, repeated, tag = "1")]
    pub values: Vec<ProtoValue>,
}

/// `HParamsPluginData`: one of experiment, session start or session end.
#[derive(Clone, PartialEq, prost::Message)]
pub struct HParamsPluginData {
    /// Format version (0).
    #[prost(int32, tag = "1")]
    pub version: i32,
    /// Experiment description.
    #[prost(message, optional, tag = "2")]
    pub experiment: Option<Experiment>,
    /// Session start.
    #[prost(message, optional, tag = "3")]
    pub session_start_info: Option<SessionStartInfo>,
    /// Session end.
    #[prost(message, optional, tag = "4")]
    pub session_end_info: Option<SessionEndInfo>,
}

/// `Experiment`: the hyperparameters and metrics of the sessions.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Experiment {
    /// Hyperparameters.
    #[prost(message, repeated, tag = "4")]
    pub hparam_infos: Vec<HParamInfo>,
    /// Metrics.
    #[prost(message, repeated, tag = "5")]
    pub metric_infos: Vec<MetricInfo>,
}

/// `HParamInfo`: a hyperparameter's name, type and optional discrete domain.
#[derive(Clone, PartialEq, prost::Message)]
pub struct HParamInfo {
    /// Name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Type, as an [`HParamType`] number.
    #[prost(enumeration = "HParamType", tag = "4")]
    pub r#type: i32,
    /// The values it may take.
    #[prost(message, optional, tag = "5")]
    pub domain_discrete: Option<ListValue>,
}

/// `DataType` of the hparams API.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum HParamType {
    /// Unknown type.
    Unset = 0,
    /// String.
    String = 1,
    /// Boolean.
    Bool = 2,
    /// Number.
    Float64 = 3,
}

/// `MetricInfo`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct MetricInfo {
    /// The metric's scalar tag.
    #[prost(message, optional, tag = "1")]
    pub name: Option<MetricName>,
}

/// `MetricName`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct MetricName {
    /// Run-relative group (empty: the session's own run).
    #[prost(string, tag = "1")]
    pub group: String,
    /// Scalar tag.
    #[prost(string, tag = "2")]
    pub tag: String,
}

/// `SessionStartInfo`: the session's hyperparameter values.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SessionStartInfo {
    /// Values by name.
    #[prost(btree_map = "string, message", tag = "1")]
    pub hparams: std::collections::BTreeMap<String, ProtoValue>,
}

/// `SessionEndInfo`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SessionEndInfo {
    /// Status (1 = success).
    #[prost(int32, tag = "1")]
    pub status: i32,
}

/// `Status.STATUS_SUCCESS`.
pub const STATUS_SUCCESS: i32 = 1;

/// One hyperparameter: its value (`None`: of a type TensorBoard cannot show) and its
/// discrete domain if any.
#[derive(Clone, Debug, PartialEq)]
pub struct HParam {
    /// Name.
    pub name: String,
    /// Value.
    pub value: Option<proto_value::Kind>,
    /// The values it may take.
    pub domain: Option<Vec<proto_value::Kind>>,
}

fn value(tag: &str, data: HParamsPluginData) -> summary::Value {
    summary::Value {
        tag: tag.to_string(),
        metadata: Some(SummaryMetadata {
            plugin_data: Some(summary_metadata::PluginData {
                plugin_name: HPARAMS_PLUGIN_NAME.to_string(),
                content: data.encode_to_vec(),
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The experiment, session-start and session-end summary values of one session.
pub fn hparams_values(hparams: &[HParam], metrics: &[String]) -> [summary::Value; 3] {
    let mut start = SessionStartInfo::default();
    let mut infos = Vec::new();
    for hp in hparams {
        let ty = match &hp.value {
            Some(proto_value::Kind::Number(_)) => HParamType::Float64,
            Some(proto_value::Kind::Text(_)) => HParamType::String,
            Some(proto_value::Kind::Bool(_)) => HParamType::Bool,
            None => HParamType::Unset,
        };
        if let Some(v) = &hp.value {
            start.hparams.insert(
                hp.name.clone(),
                ProtoValue {
                    kind: Some(v.clone()),
                },
            );
        }
        infos.push(HParamInfo {
            name: hp.name.clone(),
            r#type: ty as i32,
            domain_discrete: hp.domain.as_ref().map(|d| ListValue {
                values: d
                    .iter()
                    .map(|k| ProtoValue {
                        kind: Some(k.clone()),
                    })
                    .collect(),
            }),
        });
    }
    let experiment = Experiment {
        hparam_infos: infos,
        metric_infos: metrics
            .iter()
            .map(|m| MetricInfo {
                name: Some(MetricName {
                    group: String::new(),
                    tag: m.clone(),
                }),
            })
            .collect(),
    };
    [
        value(
            EXPERIMENT_TAG,
            HParamsPluginData {
                experiment: Some(experiment),
                ..Default::default()
            },
        ),
        value(
            SESSION_START_INFO_TAG,
            HParamsPluginData {
                session_start_info: Some(start),
                ..Default::default()
            },
        ),
        value(
            SESSION_END_INFO_TAG,
            HParamsPluginData {
                session_end_info: Some(SessionEndInfo {
                    status: STATUS_SUCCESS,
                }),
                ..Default::default()
            },
        ),
    ]
}
