//! Arrays in and out: numpy arrays (or lists) read as float32 rows or indices, checked and
//! refused with a `ValueError` naming the argument; answers written as numpy arrays.

use meshray::query::WindingAccuracy;
use meshray::{Camera, Culling, QueryOptions, Ray, RayQuery};
use numpy::ndarray::Array2;
use numpy::{PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt};

/// `numpy.asarray(object, dtype)`: arrays, lists and tuples alike, copied only when the
/// dtype differs.
pub(crate) fn as_array<'py>(
    object: &Bound<'py, PyAny>,
    dtype: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let numpy = object.py().import("numpy")?;
    let array = numpy.call_method1("asarray", (object, dtype))?;
    if array.getattr("ndim")?.extract::<usize>()? == 2 {
        Ok(array)
    } else {
        // A single row or an empty list: as (n, 3) rows if it can be.
        array.call_method1("reshape", ((-1i64, 3i64),))
    }
}

/// The culling setting by name.
pub(crate) fn culling(cull: &str) -> PyResult<Culling> {
    match cull {
        "none" => Ok(Culling::None),
        "back" => Ok(Culling::Back),
        "front" => Ok(Culling::Front),
        _ => Err(PyValueError::new_err(format!(
            "cull: expected \"none\", \"back\" or \"front\", got {cull:?}"
        ))),
    }
}

/// An `(n, 3)` array as contiguous, aligned float32 rows (a copy only when its dtype or
/// layout differs): the rays' own precision, read without a float64 detour.
pub(crate) fn rows3<'py>(
    array: &Bound<'py, PyAny>,
    what: &str,
) -> PyResult<PyReadonlyArray2<'py, f32>> {
    let numpy = array.py().import("numpy")?;
    let array = &numbers(array, what)?;
    let array = numpy
        // C order and aligned: arrays unpickled from a buffer (Dask) may be misaligned.
        .call_method1("require", (array, "float32", "CA"))
        .and_then(|a| a.call_method1("reshape", ((-1i64, 3i64),)).map(|r| (a, r)))
        .map_err(|_| {
            PyValueError::new_err(format!("{what}: expected an (n, 3) array of numbers"))
        })?;
    let (original, reshaped) = array;
    let shape: Vec<usize> = original.getattr("shape")?.extract()?;
    if !(shape.len() == 2 && shape[1] == 3 || shape.len() == 1 && shape[0] == 3 || shape == [0]) {
        return Err(PyValueError::new_err(format!(
            "{what}: expected shape (n, 3), got {shape:?}"
        )));
    }
    reshaped
        .extract()
        .map_err(|_| PyValueError::new_err(format!("{what}: expected an (n, 3) array of numbers")))
}

/// `object` as a numpy array of numbers: a list, or an array of ints or floats as it is; an
/// array of objects whose elements are all numbers as floats. Anything else (strings, bools,
/// `None` among objects) is refused as "not numbers", naming the first bad element: numpy
/// would read `None` as NaN and a string of digits as its number.
pub(crate) fn numbers<'py>(object: &Bound<'py, PyAny>, what: &str) -> PyResult<Bound<'py, PyAny>> {
    let numpy = object.py().import("numpy")?;
    let array = numpy.call_method1("asarray", (object,)).map_err(|_| {
        PyValueError::new_err(format!("{what}: expected an (n, 3) array of numbers"))
    })?;
    let dtype = array.getattr("dtype")?;
    match dtype.getattr("kind")?.extract::<String>()?.as_str() {
        "i" | "u" | "f" => Ok(array),
        "O" => {
            // Python ints and floats, numpy's number scalars; not bools, not None.
            let (number, bool_) = (numpy.getattr("number")?, numpy.getattr("bool_")?);
            let is_number = |x: &Bound<'py, PyAny>| -> PyResult<bool> {
                let boolean = x.is_instance_of::<PyBool>() || x.is_instance(&bool_)?;
                Ok(!boolean
                    && (x.is_instance_of::<PyInt>()
                        || x.is_instance_of::<PyFloat>()
                        || x.is_instance(&number)?))
            };
            for item in numpy.call_method1("ndenumerate", (&array,))?.try_iter()? {
                let (index, x): (Bound<'py, PyAny>, Bound<'py, PyAny>) = item?.extract()?;
                if !is_number(&x)? {
                    return Err(PyValueError::new_err(format!(
                        "{what}: not numbers: {what}{} is {}",
                        place(&index)?,
                        x.repr()?
                    )));
                }
            }
            array.call_method1("astype", ("float64",))
        }
        _ => Err(PyValueError::new_err(format!(
            "{what}: not numbers: an array of dtype {}",
            dtype.str()?
        ))),
    }
}

/// `index` (a tuple of ints from `numpy.ndenumerate`) as `[i, k]`.
pub(crate) fn place(index: &Bound<'_, PyAny>) -> PyResult<String> {
    let index: Vec<i64> = index.extract()?;
    let parts: Vec<String> = index.iter().map(i64::to_string).collect();
    Ok(format!("[{}]", parts.join(", ")))
}

/// `object` ([`numbers`]) with every value a whole number: vertex indices given as floats
/// are taken when each is one (`2.0`), and refused with the first that is not (`1.5`, NaN,
/// infinite), which a cast would silently truncate.
pub(crate) fn whole_numbers<'py>(object: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let numpy = object.py().import("numpy")?;
    let array = numbers(object, "faces")?;
    if array
        .getattr("dtype")?
        .getattr("kind")?
        .extract::<String>()?
        != "f"
    {
        return Ok(array);
    }
    let trunc = numpy.call_method1("trunc", (&array,))?;
    let whole = numpy.call_method1(
        "logical_and",
        (
            numpy.call_method1("isfinite", (&array,))?,
            numpy.call_method1("equal", (&array, trunc))?,
        ),
    )?;
    let bad = numpy.call_method1("argwhere", (numpy.call_method1("logical_not", (whole,))?,))?;
    if bad.len()? > 0 {
        let tuple = object.py().import("builtins")?.getattr("tuple")?;
        let index = tuple.call1((bad.get_item(0)?.call_method0("tolist")?,))?;
        return Err(PyValueError::new_err(format!(
            "faces{} = {} is not a vertex index (not a whole number)",
            place(&index)?,
            array.get_item(&index)?.str()?
        )));
    }
    Ok(array)
}

/// A flat `3n` vector as an `(n, 3)` array, without a copy.
pub(crate) fn rows(flat: Vec<f32>) -> PyResult<Array2<f32>> {
    Array2::from_shape_vec((flat.len() / 3, 3), flat)
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// A 4 × 4 matrix written row by row (numpy's `M[i][j]`), as mint's column-major one.
pub(crate) fn matrix(rows: &[[f32; 4]; 4]) -> mint::ColumnMatrix4<f32> {
    let mut columns = [0.0f32; 16];
    for (i, row) in rows.iter().enumerate() {
        for (j, &x) in row.iter().enumerate() {
            columns[4 * j + i] = x;
        }
    }
    mint::ColumnMatrix4::from(columns)
}

/// The camera of a `view` and a `projection` (4 × 4, row-major as written on paper:
/// `projection @ view @ point`) in a viewport of `(width, height)` pixels.
pub(crate) fn camera(
    view: &[[f32; 4]; 4],
    projection: &[[f32; 4]; 4],
    viewport: [f32; 2],
) -> PyResult<Camera> {
    Camera::new(matrix(view), matrix(projection), viewport).map_err(crate::errors::to_py)
}

/// `cast`'s `any_hit` as the batch query's question.
pub(crate) fn ray_query(any_hit: bool) -> RayQuery {
    if any_hit {
        RayQuery::Any
    } else {
        RayQuery::Closest
    }
}

/// Refuses a NaN or negative `t_min` and a NaN `t_max`.
pub(crate) fn check_range(t_min: f32, t_max: f32) -> PyResult<()> {
    if t_min.is_nan() || t_min < 0.0 || t_max.is_nan() {
        return Err(PyValueError::new_err(
            "t_min must be >= 0 and t_max not NaN",
        ));
    }
    Ok(())
}

/// The rows of an `(n, 3)` float32 array.
pub(crate) fn float_rows(array: &PyReadonlyArray2<'_, f32>) -> PyResult<Vec<[f32; 3]>> {
    Ok(array
        .as_slice()?
        .chunks_exact(3)
        .map(|p| [p[0], p[1], p[2]])
        .collect())
}

/// Refuses a NaN or negative `max_distance`.
pub(crate) fn check_distance(max_distance: f32) -> PyResult<()> {
    if max_distance.is_nan() || max_distance < 0.0 {
        return Err(PyValueError::new_err("max_distance must be >= 0"));
    }
    Ok(())
}

/// The winding-number accuracy by `beta` and `exact`.
pub(crate) fn winding_accuracy(beta: f64, exact: bool) -> PyResult<WindingAccuracy> {
    if exact {
        return Ok(WindingAccuracy::Exact);
    }
    if beta.is_nan() || beta < 1.0 {
        return Err(PyValueError::new_err(
            "beta must be >= 1 (2 is Barill et al.'s and libigl's default)",
        ));
    }
    Ok(WindingAccuracy::FarField { beta })
}

/// The options every ray query takes, read from its keyword arguments (`**options`):
/// `t_min` and `t_max` (the range searched, in the direction's units), `watertight` and
/// `cull`. Every ray method of `BVH` and `Scene` reads them here, so each takes and checks
/// them alike; they are keyword-only, and an unknown name is refused with a `TypeError` as
/// Python refuses one.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RayOptions {
    /// The start of each ray's range.
    pub(crate) t_min: f32,
    /// The end of each ray's range.
    pub(crate) t_max: f32,
    /// Culling and the triangle test.
    pub(crate) query: QueryOptions,
}

impl RayOptions {
    /// Reads `method`'s keyword options (`None`: every default), refusing an unknown name, a
    /// value of the wrong type (`TypeError`), a NaN or negative `t_min`, a NaN `t_max` and an
    /// unknown culling (`ValueError`).
    pub(crate) fn read(method: &str, options: Option<&Bound<'_, PyDict>>) -> PyResult<RayOptions> {
        let mut read = RayOptions {
            t_min: 0.0,
            t_max: f32::INFINITY,
            query: QueryOptions::default(),
        };
        for (name, value) in options.into_iter().flatten() {
            let name: String = name.extract()?;
            let wrong_type =
                |e: PyErr| PyTypeError::new_err(format!("{method}() argument '{name}': {e}"));
            match name.as_str() {
                "t_min" => read.t_min = value.extract().map_err(wrong_type)?,
                "t_max" => read.t_max = value.extract().map_err(wrong_type)?,
                "watertight" => read.query.watertight = value.extract().map_err(wrong_type)?,
                "cull" => {
                    read.query.culling = culling(&value.extract::<String>().map_err(wrong_type)?)?
                }
                _ => {
                    return Err(PyTypeError::new_err(format!(
                        "{method}() got an unexpected keyword argument '{name}' (a ray \
                         query's options are t_min, t_max, watertight and cull)"
                    )));
                }
            }
        }
        check_range(read.t_min, read.t_max)?;
        Ok(read)
    }

    /// `ray`, searched over these options' range instead of its own.
    pub(crate) fn ranged(&self, ray: Ray) -> Ray {
        Ray::with_range(ray.origin(), ray.direction(), self.t_min, self.t_max)
    }
}

/// The rays of a batch as its arguments give them: `origins` and `directions` read as
/// float32 rows of the same length (a copy only when their dtype or layout differs), with
/// the keyword options, checked. Every ray query of `BVH` and `Scene` reads its rays here.
pub(crate) struct RayRows<'py> {
    origins: PyReadonlyArray2<'py, f32>,
    directions: PyReadonlyArray2<'py, f32>,
    options: RayOptions,
}

impl<'py> RayRows<'py> {
    /// Reads and checks `method`'s arguments: arrays that are not `(n, 3)` numbers or differ
    /// in length are refused, naming the argument, and the options as [`RayOptions::read`]
    /// refuses them.
    pub(crate) fn read(
        method: &str,
        origins: &Bound<'py, PyAny>,
        directions: &Bound<'py, PyAny>,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Self> {
        let options = RayOptions::read(method, options)?;
        let (o, d) = (rows3(origins, "origins")?, rows3(directions, "directions")?);
        if o.len() != d.len() {
            return Err(PyValueError::new_err(format!(
                "origins and directions differ in length: {} and {}",
                o.len() / 3,
                d.len() / 3
            )));
        }
        Ok(RayRows {
            origins: o,
            directions: d,
            options,
        })
    }

    /// How many rays.
    pub(crate) fn len(&self) -> usize {
        self.origins.len() / 3
    }

    /// Culling and the triangle test.
    pub(crate) fn query_options(&self) -> QueryOptions {
        self.options.query
    }

    /// The rows, for making the rays where a batch needs them (without the GIL).
    pub(crate) fn source(&self) -> PyResult<RaySource<'_>> {
        Ok(RaySource {
            o: self.origins.as_slice()?,
            d: self.directions.as_slice()?,
            t_min: self.options.t_min,
            t_max: self.options.t_max,
        })
    }

    /// Every ray, made.
    pub(crate) fn rays(&self) -> PyResult<Vec<Ray>> {
        let source = self.source()?;
        Ok((0..self.len()).map(|i| source.ray(i)).collect())
    }
}

/// The flat rows of a [`RayRows`]: ray `i` made on demand.
#[derive(Clone, Copy)]
pub(crate) struct RaySource<'a> {
    o: &'a [f32],
    d: &'a [f32],
    t_min: f32,
    t_max: f32,
}

impl RaySource<'_> {
    /// Ray `i`.
    pub(crate) fn ray(&self, i: usize) -> Ray {
        let (o, d) = (&self.o[3 * i..3 * i + 3], &self.d[3 * i..3 * i + 3]);
        Ray::with_range(
            [o[0], o[1], o[2]],
            [d[0], d[1], d[2]],
            self.t_min,
            self.t_max,
        )
    }
}

/// The rows of `points` (`(n, 3)` numbers), read as float32.
pub(crate) fn points(points: &Bound<'_, PyAny>) -> PyResult<Vec<[f32; 3]>> {
    float_rows(&rows3(points, "points")?)
}
