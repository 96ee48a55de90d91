import streamlit as st
st.title('operations')
