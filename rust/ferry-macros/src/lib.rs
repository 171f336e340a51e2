//! Procedural macros of the `ferry` crate: `#[derive(ferry::Object)]`.
//!
//! Written on `proc_macro` alone (no `syn`/`quote`), so the derive adds nothing to build times;
//! it accepts what a Ferry type is: a struct with named fields, no generics.
use proc_macro::{Delimiter, TokenStream, TokenTree};

/// Mirrors a Rust struct as a Ferry type registered at run time (what Python's `py_class`
/// does): `#[derive(ferry::Object)] #[ferry(type_key = "demo.Point")] struct Point { x: i64,
/// y: f64 }`, then `ferry::register_type::<Point>()?`. C++ reflection, `make_node`, JSON and
/// structural equality then see `demo.Point` like any other type. Every field type implements
/// `Clone`, `ferry::IntoAny`, `ferry::FromAny` and `ferry::FieldType`.
#[proc_macro_derive(Object, attributes(ferry))]
pub fn derive_object(input: TokenStream) -> TokenStream {
    match expand(input) {
        Ok(code) => code.parse().expect("the derive generates valid Rust"),
        Err(message) => format!("::core::compile_error!({message:?});")
            .parse()
            .unwrap(),
    }
}

struct Field {
    name: String,
    ty: String,
}

fn expand(input: TokenStream) -> Result<String, String> {
    let tokens: Vec<TokenTree> = input.into_iter().collect();
    let mut type_key = None;
    let mut i = 0;
    // Outer attributes (ours: #[ferry(type_key = "...")]) and the visibility.
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Punct(p) if p.as_char() == '#' => {
                if let Some(TokenTree::Group(g)) = tokens.get(i + 1) {
                    if let Some(key) = ferry_attribute(g.stream())? {
                        type_key = Some(key);
                    }
                }
                i += 2;
            }
            TokenTree::Ident(id) if id.to_string() == "pub" => {
                i += 1;
                if let Some(TokenTree::Group(g)) = tokens.get(i) {
                    if g.delimiter() == Delimiter::Parenthesis {
                        i += 1;
                    }
                }
            }
            _ => break,
        }
    }
    match tokens.get(i) {
        Some(TokenTree::Ident(id)) if id.to_string() == "struct" => {}
        _ => return Err("#[derive(ferry::Object)] is for structs with named fields".into()),
    }
    let name = match tokens.get(i + 1) {
        Some(TokenTree::Ident(id)) => id.to_string(),
        _ => return Err("#[derive(ferry::Object)]: expected the struct's name".into()),
    };
    let body = match tokens.get(i + 2) {
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => g.stream(),
        Some(TokenTree::Punct(p)) if p.as_char() == '<' => {
            return Err(format!(
                "#[derive(ferry::Object)]: {name} has generic parameters; a Ferry type has none"
            ))
        }
        _ => {
            return Err(format!(
                "#[derive(ferry::Object)]: {name} must have named fields"
            ))
        }
    };
    let type_key = type_key.ok_or_else(|| {
        format!("#[derive(ferry::Object)]: {name} needs #[ferry(type_key = \"...\")]")
    })?;
    let fields = parse_fields(body)?;

    let mut specs = String::new();
    let mut values = String::new();
    let mut reads = String::new();
    for f in &fields {
        let (n, t) = (&f.name, &f.ty);
        specs += &format!(
            "::ferry::FieldDef {{ name: {n:?}, type_text: <{t} as ::ferry::FieldType>::type_text() }},"
        );
        values += &format!("::ferry::IntoAny::into_any(::core::clone::Clone::clone(&self.{n})),");
        reads += &format!("{n}: obj.get_attr({n:?})?.cast::<{t}>()?,");
    }
    Ok(format!(
        r#"
impl ::ferry::Object for {name} {{
    const TYPE_KEY: &'static str = {type_key:?};
    fn fields() -> ::std::vec::Vec<::ferry::FieldDef> {{
        ::std::vec![{specs}]
    }}
    fn field_values(&self) -> ::std::vec::Vec<::ferry::Any> {{
        ::std::vec![{values}]
    }}
    fn from_object(obj: &::ferry::ObjectRef) -> ::ferry::Result<Self> {{
        ::ferry::check_object_type::<Self>(obj)?;
        ::core::result::Result::Ok({name} {{ {reads} }})
    }}
}}
impl ::ferry::FieldType for {name} {{
    fn type_text() -> ::std::string::String {{
        ::std::string::String::from({type_key:?})
    }}
}}
impl ::ferry::FromAny for {name} {{
    fn type_str() -> ::std::string::String {{
        ::std::string::String::from({type_key:?})
    }}
    fn from_view(view: &::ferry::AnyView<'_>) -> ::core::option::Option<Self> {{
        let obj: ::ferry::ObjectRef = view.cast().ok()?;
        <Self as ::ferry::Object>::from_object(&obj).ok()
    }}
}}
"#
    ))
}

/// The type key of `ferry(type_key = "...")`, None for another attribute.
fn ferry_attribute(attr: TokenStream) -> Result<Option<String>, String> {
    let tokens: Vec<TokenTree> = attr.into_iter().collect();
    match tokens.first() {
        Some(TokenTree::Ident(id)) if id.to_string() == "ferry" => {}
        _ => return Ok(None),
    }
    let args: Vec<TokenTree> = match tokens.get(1) {
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => {
            g.stream().into_iter().collect()
        }
        _ => return Err("#[derive(ferry::Object)]: expected #[ferry(type_key = \"...\")]".into()),
    };
    match (args.first(), args.get(1), args.get(2), args.len()) {
        (Some(TokenTree::Ident(k)), Some(TokenTree::Punct(eq)), Some(TokenTree::Literal(v)), 3)
            if k.to_string() == "type_key" && eq.as_char() == '=' =>
        {
            let text = v.to_string();
            let key = text
                .strip_prefix('"')
                .and_then(|t| t.strip_suffix('"'))
                .ok_or("#[derive(ferry::Object)]: type_key must be a plain string literal")?;
            if key.is_empty() || key.contains('\\') {
                return Err(
                    "#[derive(ferry::Object)]: type_key must be a non-empty plain string literal"
                        .into(),
                );
            }
            Ok(Some(key.to_string()))
        }
        _ => Err(
            "#[derive(ferry::Object)]: expected #[ferry(type_key = \"...\")], the only option"
                .into(),
        ),
    }
}

/// `name: Type` pairs of a brace-delimited field list (attributes and visibility skipped).
fn parse_fields(body: TokenStream) -> Result<Vec<Field>, String> {
    let mut fields = Vec::new();
    let mut current: Vec<TokenTree> = Vec::new();
    let mut depth = 0i32; // of `<...>` in types: their commas do not end a field
    for token in body {
        match &token {
            TokenTree::Punct(p) if p.as_char() == '<' => depth += 1,
            TokenTree::Punct(p) if p.as_char() == '>' && depth > 0 => depth -= 1,
            TokenTree::Punct(p) if p.as_char() == ',' && depth == 0 => {
                fields.push(field(std::mem::take(&mut current))?);
                continue;
            }
            _ => {}
        }
        current.push(token);
    }
    if !current.is_empty() {
        fields.push(field(current)?);
    }
    Ok(fields)
}

fn field(tokens: Vec<TokenTree>) -> Result<Field, String> {
    let mut i = 0;
    loop {
        match tokens.get(i) {
            Some(TokenTree::Punct(p)) if p.as_char() == '#' => i += 2,
            Some(TokenTree::Ident(id)) if id.to_string() == "pub" => {
                i += 1;
                if let Some(TokenTree::Group(g)) = tokens.get(i) {
                    if g.delimiter() == Delimiter::Parenthesis {
                        i += 1;
                    }
                }
            }
            _ => break,
        }
    }
    let name = match tokens.get(i) {
        Some(TokenTree::Ident(id)) => id.to_string(),
        _ => return Err("#[derive(ferry::Object)]: expected a field name".into()),
    };
    match tokens.get(i + 1) {
        Some(TokenTree::Punct(p)) if p.as_char() == ':' => {}
        _ => {
            return Err(format!(
                "#[derive(ferry::Object)]: expected `:` after field {name}"
            ))
        }
    }
    let ty: TokenStream = tokens[i + 2..].iter().cloned().collect();
    if ty.is_empty() {
        return Err(format!(
            "#[derive(ferry::Object)]: field {name} has no type"
        ));
    }
    Ok(Field {
        name,
        ty: ty.to_string(),
    })
}
