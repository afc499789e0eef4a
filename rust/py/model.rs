//! Pydantic model instances made as pydantic-core's `create_class` and `set_model_attrs` (model.rs) make them: the
//! class's `tp_new` with no arguments (no `__init__`), then the instance dict and the three slots `BaseModel`
//! declares, set without the model's `__setattr__`.
//!
//! pydantic-core sets each through `object.__setattr__`, which looks the name up on the class's MRO every time. Here
//! the descriptors are looked up once, when the plan is built ([`ModelClass::new`]), and each instance's slots are
//! set through them: the same stores, without the lookups.

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFrozenSet, PySet, PyTuple, PyType};

/// The slots `BaseModel` declares besides `__dict__`, in the order pydantic-core sets them.
const SLOTS: [&str; 3] = [
    "__pydantic_extra__",
    "__pydantic_private__",
    "__pydantic_fields_set__",
];

/// A model class and the member descriptors of its [`SLOTS`], found on its MRO.
pub(crate) struct ModelClass {
    cls: Py<PyType>,
    slots: [Py<PyAny>; 3],
    set: ffi::descrsetfunc,
}

impl ModelClass {
    /// `None` when the class does not hold `BaseModel`'s layout: a slot that is not a plain member descriptor
    /// (`types.MemberDescriptorType`), or a `__dict__` that is not the instance dict's getset descriptor.
    pub(crate) fn new(cls: &Bound<'_, PyType>) -> Option<Self> {
        let py = cls.py();
        let types = py.import("types").ok()?;
        let member = types.getattr("MemberDescriptorType").ok()?;
        let getset = types.getattr("GetSetDescriptorType").ok()?;
        if !class_attribute(cls, "__dict__")?.get_type().is(&getset) {
            return None;
        }
        let mut slots = Vec::with_capacity(SLOTS.len());
        for name in SLOTS {
            let descriptor = class_attribute(cls, name)?;
            if !descriptor.get_type().is(&member) {
                return None;
            }
            slots.push(descriptor.unbind());
        }
        let set = descriptor_setter(member.cast::<PyType>().ok()?)?;
        Some(Self {
            cls: cls.clone().unbind(),
            slots: slots.try_into().ok()?,
            set,
        })
    }

    /// The class.
    pub(crate) fn class<'py>(&self, py: Python<'py>) -> &Bound<'py, PyType> {
        self.cls.bind(py)
    }

    /// A new instance with `dict` as its `__dict__`, no extras, no private attributes, and `names` (`None`: unset,
    /// as pydantic-core leaves it when no name is tracked) as `__pydantic_fields_set__`.
    pub(crate) fn instance<'py>(
        &self,
        dict: &Bound<'py, PyDict>,
        names: Option<Bound<'py, PySet>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = dict.py();
        let instance = new_instance(self.cls.bind(py))?;
        set_dict(&instance, dict)?;
        let none = py.None().into_bound(py);
        let names = names.map_or_else(|| none.clone(), Bound::into_any);
        for (slot, value) in self.slots.iter().zip([&none, &none, &names]) {
            self.set_slot(&instance, slot.bind(py), value)?;
        }
        Ok(instance)
    }

    /// `slot.__set__(instance, value)` through the member descriptor type's `tp_descr_set`.
    #[allow(unsafe_code)]
    fn set_slot(
        &self,
        instance: &Bound<'_, PyAny>,
        slot: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        // SAFETY: `set` is the `tp_descr_set` of `types.MemberDescriptorType`, `slot` an instance of that type (both
        // checked in `new`); the three pointers are live objects borrowed for the call; the function does not steal
        // references and returns -1 with an exception set on failure (a wrong instance type included).
        let status = unsafe { (self.set)(slot.as_ptr(), instance.as_ptr(), value.as_ptr()) };
        status_to_result(instance.py(), status)
    }
}

/// `cls.<name>` as found on the class's MRO (no descriptor protocol), `None` when no class there has it.
fn class_attribute<'py>(cls: &Bound<'py, PyType>, name: &str) -> Option<Bound<'py, PyAny>> {
    let mro = cls.getattr("__mro__").ok()?;
    for klass in mro.try_iter().ok()? {
        let namespace = klass.ok()?.getattr("__dict__").ok()?;
        if let Ok(found) = namespace.get_item(name) {
            return Some(found);
        }
    }
    None
}

/// The `tp_descr_set` slot of `descriptor_type`.
#[allow(unsafe_code)]
fn descriptor_setter(descriptor_type: &Bound<'_, PyType>) -> Option<ffi::descrsetfunc> {
    // SAFETY: a live type object; `PyType_GetSlot` reads static types' slots from Python 3.10 on (the abi3 floor)
    // and returns null or the type's `descrsetfunc`.
    let slot = unsafe { ffi::PyType_GetSlot(descriptor_type.as_type_ptr(), ffi::Py_tp_descr_set) };
    if slot.is_null() {
        return None;
    }
    // SAFETY: a non-null `Py_tp_descr_set` slot is a `descrsetfunc`.
    Some(unsafe { std::mem::transmute::<*mut std::ffi::c_void, ffi::descrsetfunc>(slot) })
}

/// `instance.__dict__ = dict` as `object.__setattr__` sets it for a class whose `__dict__` is the instance dict's
/// getset descriptor (checked in [`ModelClass::new`]): CPython's `PyObject_GenericSetDict`.
#[allow(unsafe_code)]
fn set_dict(instance: &Bound<'_, PyAny>, dict: &Bound<'_, PyDict>) -> PyResult<()> {
    // SAFETY: both are live objects borrowed for the call; the function takes its own reference to `dict` and
    // returns -1 with an exception set on failure.
    let status = unsafe {
        ffi::PyObject_GenericSetDict(instance.as_ptr(), dict.as_ptr(), std::ptr::null_mut())
    };
    status_to_result(instance.py(), status)
}

fn status_to_result(py: Python<'_>, status: std::ffi::c_int) -> PyResult<()> {
    if status == 0 {
        Ok(())
    } else {
        Err(PyErr::fetch(py))
    }
}

/// A new `set` with the items of `names`: `PySet_New` copies a set's table at once (no hashing or probing per
/// item, unlike adding the names one by one).
#[allow(unsafe_code)]
pub(crate) fn set_of<'py>(names: &Bound<'py, PyFrozenSet>) -> PyResult<Bound<'py, PySet>> {
    // SAFETY: `names` is a live frozenset borrowed for the call; `PySet_New` does not steal it and returns a new
    // reference or null with an exception set, which `from_owned_ptr_or_err` takes over.
    let set = unsafe { Bound::from_owned_ptr_or_err(names.py(), ffi::PySet_New(names.as_ptr()))? };
    Ok(set.cast_into::<PySet>()?)
}

/// A new instance of `cls` as its `tp_new` (`object.__new__`: only such classes get here) makes one with no
/// arguments, which pydantic-core's `create_class` (model.rs) calls (no `__init__`): the class's `tp_alloc`, as
/// `object.__new__` calls it. An abstract class goes through `tp_new` itself, which refuses it (`TypeError`).
///
/// `object.__new__` of CPython 3.11 and 3.12 also fills a managed instance dict's inline values, which the
/// `__dict__` set right after ([`set_dict`]) turns into a dict and drops again: left out here, the instance
/// starts with neither (a state CPython handles, as for a dict never touched), and gets its dict at once.
#[allow(unsafe_code)]
fn new_instance<'py>(cls: &Bound<'py, PyType>) -> PyResult<Bound<'py, PyAny>> {
    let py = cls.py();
    let tp = cls.as_type_ptr();
    // SAFETY: `tp` is a live type object (borrowed from `cls` for this call); `PyType_GetFlags` reads its flags.
    let abstract_class = unsafe { ffi::PyType_GetFlags(tp) } & ffi::Py_TPFLAGS_IS_ABSTRACT != 0;
    let slot_name = if abstract_class {
        ffi::Py_tp_new
    } else {
        ffi::Py_tp_alloc
    };
    // SAFETY: as above; `PyType_GetSlot` reads any type's slot from Python 3.10 on (the abi3 floor), and returns
    // either null or the slot's function.
    let slot = unsafe { ffi::PyType_GetSlot(tp, slot_name) };
    if slot.is_null() {
        return Err(PyTypeError::new_err("base type without tp_new or tp_alloc"));
    }
    // SAFETY: a non-null `Py_tp_new` slot is a `newfunc`, a `Py_tp_alloc` slot an `allocfunc`. `tp_new` is called
    // with the type, an empty args tuple (kept alive by `args`) and null kwargs, as CPython's `type_call` may;
    // `tp_alloc` with the type and no items, as `object.__new__` calls it. Each returns a new reference or null
    // with an exception set, which `from_owned_ptr_or_err` takes over.
    unsafe {
        let made = if abstract_class {
            let args = PyTuple::empty(py);
            let new = std::mem::transmute::<*mut std::ffi::c_void, ffi::newfunc>(slot);
            new(tp, args.as_ptr(), std::ptr::null_mut())
        } else {
            let alloc = std::mem::transmute::<*mut std::ffi::c_void, ffi::allocfunc>(slot);
            alloc(tp, 0)
        };
        Bound::from_owned_ptr_or_err(py, made)
    }
}
