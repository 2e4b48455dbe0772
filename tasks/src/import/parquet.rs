//! Parquet: rows of HF data sets and of verl read as JSON objects, and packs written as
//! verl's training rows.
//!
//! Reading converts each Arrow row to a JSON object once (strings, numbers, booleans, lists,
//! structs, maps, dictionary-encoded columns; binary columns when they are UTF-8), then the
//! format's converter reads it like a JSON line.
//!
//! Writing ([`write_verl`]) makes verl's row layout:
//!
//! | column | type | value |
//! |---|---|---|
//! | `data_source` | string | `metadata.source`, else `grpo/<pack>` |
//! | `prompt` | list of struct `{role, content}` | one user message: the task rendered with the pack's template |
//! | `ability` | string | `math` or `code` |
//! | `reward_model` | struct `{style, ground_truth}` | `style` `rule`; math: the answer; code: JSON text `{"inputs", "outputs"}` (+ `fn_name` for call tests) |
//! | `extra_info` | struct `{split, index}` | the split's name and the task's position in it |
//!
//! Tasks verl's rows cannot hold are left out and listed: countdown, assert tests, stdio tests
//! with a checker or a comparison other than the default, call tests with a float tolerance.

use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float16Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type,
    UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrayRef, Int64Array, ListArray, RecordBatch, StringArray, StructArray};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field, Fields, Schema};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use serde_json::{Map, Number, Value, json};

use super::JsonObject;
use crate::error::{ExportError, ImportError};
use crate::pack::Pack;
use crate::task::{CodeTests, Task};

/// The first (and last) four bytes of every Parquet file.
pub const MAGIC: &[u8] = b"PAR1";

/// The rows of a Parquet file as JSON objects, each with its 1-based row number.
pub fn read_rows(file: &str, bytes: Vec<u8>) -> Result<Vec<(usize, JsonObject)>, ImportError> {
    let error = |message: String| ImportError::Parquet {
        file: file.to_owned(),
        message,
    };
    let reader = ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(bytes))
        .and_then(|b| b.build())
        .map_err(|e| error(format!("not a readable Parquet file: {e}")))?;
    let mut rows = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| error(format!("reading a row group: {e}")))?;
        let schema = batch.schema();
        let start = rows.len();
        for row in 0..batch.num_rows() {
            rows.push((start + row + 1, Map::new()));
        }
        for (field, column) in schema.fields().iter().zip(batch.columns()) {
            for row in 0..batch.num_rows() {
                let value = to_json(column.as_ref(), row).map_err(|m| {
                    error(format!(
                        "row {}, column `{}`: {m}",
                        start + row + 1,
                        field.name()
                    ))
                })?;
                rows[start + row].1.insert(field.name().clone(), value);
            }
        }
    }
    Ok(rows)
}

/// The JSON form of one value of an Arrow array.
fn to_json(array: &dyn Array, i: usize) -> Result<Value, String> {
    if array.is_null(i) {
        return Ok(Value::Null);
    }
    let wrong = || format!("column data does not match its type {}", array.data_type());
    macro_rules! int {
        ($t:ty) => {
            Value::from(array.as_primitive_opt::<$t>().ok_or_else(wrong)?.value(i))
        };
    }
    macro_rules! float {
        ($t:ty) => {{
            let v = f64::from(array.as_primitive_opt::<$t>().ok_or_else(wrong)?.value(i));
            Number::from_f64(v)
                .map(Value::Number)
                .ok_or_else(|| format!("float {v} has no JSON form"))?
        }};
    }
    let list = |values: ArrayRef| -> Result<Value, String> {
        (0..values.len())
            .map(|j| to_json(values.as_ref(), j))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array)
    };
    let utf8 = |bytes: &[u8]| {
        std::str::from_utf8(bytes)
            .map(|s| Value::String(s.to_owned()))
            .map_err(|_| "binary data that is not UTF-8 text".to_owned())
    };
    Ok(match array.data_type() {
        DataType::Null => Value::Null,
        DataType::Boolean => Value::Bool(array.as_boolean_opt().ok_or_else(wrong)?.value(i)),
        DataType::Int8 => int!(Int8Type),
        DataType::Int16 => int!(Int16Type),
        DataType::Int32 => int!(Int32Type),
        DataType::Int64 => int!(Int64Type),
        DataType::UInt8 => int!(UInt8Type),
        DataType::UInt16 => int!(UInt16Type),
        DataType::UInt32 => int!(UInt32Type),
        DataType::UInt64 => int!(UInt64Type),
        DataType::Float16 => float!(Float16Type),
        DataType::Float32 => float!(Float32Type),
        DataType::Float64 => float!(Float64Type),
        DataType::Utf8 => Value::String(
            array
                .as_string_opt::<i32>()
                .ok_or_else(wrong)?
                .value(i)
                .to_owned(),
        ),
        DataType::LargeUtf8 => Value::String(
            array
                .as_string_opt::<i64>()
                .ok_or_else(wrong)?
                .value(i)
                .to_owned(),
        ),
        DataType::Utf8View => Value::String(
            array
                .as_string_view_opt()
                .ok_or_else(wrong)?
                .value(i)
                .to_owned(),
        ),
        DataType::Binary => utf8(array.as_binary_opt::<i32>().ok_or_else(wrong)?.value(i))?,
        DataType::LargeBinary => utf8(array.as_binary_opt::<i64>().ok_or_else(wrong)?.value(i))?,
        DataType::BinaryView => utf8(array.as_binary_view_opt().ok_or_else(wrong)?.value(i))?,
        DataType::List(_) => list(array.as_list_opt::<i32>().ok_or_else(wrong)?.value(i))?,
        DataType::LargeList(_) => list(array.as_list_opt::<i64>().ok_or_else(wrong)?.value(i))?,
        DataType::FixedSizeList(..) => {
            list(array.as_fixed_size_list_opt().ok_or_else(wrong)?.value(i))?
        }
        DataType::Struct(fields) => {
            let s = array.as_struct_opt().ok_or_else(wrong)?;
            let mut map = Map::new();
            for (field, column) in fields.iter().zip(s.columns()) {
                map.insert(field.name().clone(), to_json(column.as_ref(), i)?);
            }
            Value::Object(map)
        }
        DataType::Map(..) => {
            let entries = array.as_map_opt().ok_or_else(wrong)?.value(i);
            let [keys, values] = entries.columns() else {
                return Err(wrong());
            };
            let mut map = Map::new();
            for j in 0..entries.len() {
                let key = match to_json(keys.as_ref(), j)? {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                map.insert(key, to_json(values.as_ref(), j)?);
            }
            Value::Object(map)
        }
        DataType::Dictionary(..) => {
            let d = array.as_any_dictionary_opt().ok_or_else(wrong)?;
            let key = *d.normalized_keys().get(i).ok_or_else(wrong)?;
            to_json(d.values().as_ref(), key)?
        }
        other => return Err(format!("columns of type {other} are not read")),
    })
}

/// What [`write_verl`] wrote.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VerlExport {
    /// Rows written.
    pub rows: usize,
    /// Tasks left out (id, why).
    pub skipped: Vec<(String, String)>,
}

/// One verl row, before it is laid out in columns.
struct Row {
    data_source: String,
    prompt: String,
    ability: &'static str,
    ground_truth: String,
    split: String,
    index: i64,
}

/// The verl ground truth of a task and its ability, or why it has none.
pub fn verl_ground_truth(task: &Task) -> Result<(&'static str, String), String> {
    match task {
        Task::Math(t) => Ok(("math", t.answer.clone())),
        Task::Countdown(_) => Err("countdown tasks have no verl ground truth".into()),
        Task::Code(t) => match &t.tests {
            CodeTests::Assert(_) => {
                Err("assert tests cannot be written as verl's inputs and outputs".into())
            }
            CodeTests::Stdio(s) if s.checker.is_some() => {
                Err("a checker program cannot be written in verl's ground truth".into())
            }
            CodeTests::Stdio(s) if !s.comparison().is_default() => Err(
                "a comparison other than the default cannot be written in verl's ground truth"
                    .into(),
            ),
            CodeTests::Stdio(s) => Ok((
                "code",
                json!({
                    "inputs": s.cases.iter().map(|c| c.stdin.clone()).collect::<Vec<_>>(),
                    "outputs": s.cases.iter().map(|c| c.stdout.clone()).collect::<Vec<_>>(),
                })
                .to_string(),
            )),
            CodeTests::Call(c) if c.float_tolerance.is_some() => {
                Err("a float tolerance cannot be written in verl's ground truth".into())
            }
            CodeTests::Call(c) => Ok((
                "code",
                json!({
                    "inputs": c.cases.iter().map(|k| k.args.clone()).collect::<Vec<_>>(),
                    "outputs": c.cases.iter().map(|k| k.expected.clone()).collect::<Vec<_>>(),
                    "fn_name": c.entry_point,
                })
                .to_string(),
            )),
        },
    }
}

/// Writes every split of `pack` as verl's training rows (snappy-compressed Parquet).
pub fn write_verl(pack: &Pack, path: &Path) -> Result<VerlExport, ExportError> {
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    for split in pack.splits() {
        let mut index = 0i64;
        for task in &split.tasks {
            let (ability, ground_truth) = match verl_ground_truth(task) {
                Ok(x) => x,
                Err(reason) => {
                    skipped.push((task.id().to_owned(), reason));
                    continue;
                }
            };
            let data_source = task
                .metadata()
                .and_then(|m| m.get("source"))
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_else(|| format!("grpo/{}", pack.manifest.name));
            rows.push(Row {
                data_source,
                prompt: pack.manifest.template.render(task),
                ability,
                ground_truth,
                split: split.name.clone(),
                index,
            });
            index += 1;
        }
    }
    let parquet_error = |e: &dyn std::fmt::Display| ExportError::Parquet {
        path: path.to_owned(),
        message: e.to_string(),
    };
    let batch = verl_batch(&rows).map_err(|e| parquet_error(&e))?;
    let file = std::fs::File::create(path).map_err(|source| ExportError::Io {
        path: path.to_owned(),
        source,
    })?;
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .build();
    let mut writer =
        ArrowWriter::try_new(file, batch.schema(), Some(props)).map_err(|e| parquet_error(&e))?;
    writer.write(&batch).map_err(|e| parquet_error(&e))?;
    writer.close().map_err(|e| parquet_error(&e))?;
    Ok(VerlExport {
        rows: rows.len(),
        skipped,
    })
}

fn strings<'a>(values: impl Iterator<Item = &'a str>) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(values))
}

fn verl_batch(rows: &[Row]) -> Result<RecordBatch, arrow_schema::ArrowError> {
    let string = |name: &str| Field::new(name, DataType::Utf8, true);
    let message_fields = Fields::from(vec![string("role"), string("content")]);
    let messages = StructArray::try_new(
        message_fields.clone(),
        vec![
            strings(rows.iter().map(|_| "user")),
            strings(rows.iter().map(|r| r.prompt.as_str())),
        ],
        None,
    )?;
    let item = Arc::new(Field::new("item", DataType::Struct(message_fields), true));
    let prompt = ListArray::try_new(
        item.clone(),
        OffsetBuffer::from_lengths(rows.iter().map(|_| 1)),
        Arc::new(messages),
        None,
    )?;
    let reward_fields = Fields::from(vec![string("style"), string("ground_truth")]);
    let reward_model = StructArray::try_new(
        reward_fields.clone(),
        vec![
            strings(rows.iter().map(|_| "rule")),
            strings(rows.iter().map(|r| r.ground_truth.as_str())),
        ],
        None,
    )?;
    let extra_fields = Fields::from(vec![
        string("split"),
        Field::new("index", DataType::Int64, true),
    ]);
    let extra_info = StructArray::try_new(
        extra_fields.clone(),
        vec![
            strings(rows.iter().map(|r| r.split.as_str())),
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.index))),
        ],
        None,
    )?;
    let schema = Schema::new(vec![
        string("data_source"),
        Field::new("prompt", DataType::List(item), true),
        string("ability"),
        Field::new("reward_model", DataType::Struct(reward_fields), true),
        Field::new("extra_info", DataType::Struct(extra_fields), true),
    ]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![
            strings(rows.iter().map(|r| r.data_source.as_str())),
            Arc::new(prompt),
            strings(rows.iter().map(|r| r.ability)),
            Arc::new(reward_model),
            Arc::new(extra_info),
        ],
    )
}
